/*
 * The ceiling for Kakapo's upstream path on this machine: a bare HTTP/1.1 forwarder built on libcurl's
 * easy interface, one thread and one reused easy handle per client connection (Kakapo's design without
 * Kakapo: no NIO, no routes, no matching, no recording). It forwards GET and HEAD requests without
 * bodies to UPSTREAM and answers with the upstream's status, Content-Type and body.
 *
 *   cc -O2 -o /tmp/curl-forwarder tools/curl-forwarder.c -lcurl -lpthread
 *   /tmp/curl-forwarder http://127.0.0.1:8080 9000
 *
 * tools/bench-forwarder runs it as a candidate in the peers harness (S3, next to nginx proxy_pass).
 * It is a measuring tool, not a proxy: anything but a small GET or HEAD gets 501.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "curl-body-buffer.h"

static const char *upstream;

static int write_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, data, length);
        if (written <= 0) return -1;
        data += written;
        length -= (size_t)written;
    }
    return 0;
}

static void *serve(void *argument) {
    int fd = (int)(long)argument;
    CURL *curl = curl_easy_init();
    char request[16384];
    size_t filled = 0;
    struct buffer body = {0};
    char url[8192];
    for (;;) {
        char *end = NULL;
        while (!(end = memmem(request, filled, "\r\n\r\n", 4))) {
            if (filled == sizeof request) goto done;
            ssize_t count = read(fd, request + filled, sizeof request - filled);
            if (count <= 0) goto done;
            filled += (size_t)count;
        }
        size_t head_length = (size_t)(end - request) + 4;
        char method[16], target[4096];
        if (sscanf(request, "%15s %4095s", method, target) != 2) goto done;
        int head = strcmp(method, "HEAD") == 0;
        if (!head && strcmp(method, "GET") != 0) {
            const char *refusal = "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            write_all(fd, refusal, strlen(refusal));
            goto done;
        }
        snprintf(url, sizeof url, "%s%s", upstream, target);
        body.length = 0;
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_NOBODY, head ? 1L : 0L);
        curl_easy_setopt(curl, CURLOPT_HTTPGET, head ? 0L : 1L);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
        curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        CURLcode code = curl_easy_perform(curl);
        long status = 502;
        const char *type = NULL;
        if (code == CURLE_OK) {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
            curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type);
        }
        char response_head[512];
        int length = snprintf(
            response_head, sizeof response_head, "HTTP/1.1 %ld OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
            status, type ? type : "application/octet-stream", body.length);
        struct iovec parts[2] = {{response_head, (size_t)length}, {body.data, head ? 0 : body.length}};
        if (writev(fd, parts, 2) < 0) goto done;
        memmove(request, request + head_length, filled - head_length);
        filled -= head_length;
    }
done:
    free(body.data);
    curl_easy_cleanup(curl);
    close(fd);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s UPSTREAM-URL PORT\n", argv[0]);
        return 2;
    }
    upstream = argv[1];
    curl_global_init(CURL_GLOBAL_ALL);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 512) != 0) {
        perror("listen");
        return 1;
    }
    for (;;) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0) continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_t thread;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attributes, serve, (void *)(long)fd) != 0) close(fd);
        pthread_attr_destroy(&attributes);
    }
}
