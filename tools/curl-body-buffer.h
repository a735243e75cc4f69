/*
 * A growing byte buffer and the libcurl write callback that fills it: the body collector of the bare
 * forwarders (tools/curl-forwarder.c, tools/curl-multi-forwarder.c).
 */
#ifndef KAKAPO_CURL_BODY_BUFFER_H
#define KAKAPO_CURL_BODY_BUFFER_H

#include <stdlib.h>
#include <string.h>

struct buffer {
    char *data;
    size_t length;
    size_t capacity;
};

/* CURLOPT_WRITEFUNCTION with a struct buffer as CURLOPT_WRITEDATA. */
static size_t collect(char *data, size_t size, size_t count, void *userdata) {
    struct buffer *buffer = userdata;
    size_t length = size * count;
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 4096;
        while (capacity < buffer->length + length) capacity *= 2;
        char *grown = realloc(buffer->data, capacity);
        if (!grown) return 0;
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
    return length;
}

#endif
