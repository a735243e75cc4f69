#ifndef KAKAPO_CCURL_SHIM_H
#define KAKAPO_CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call.
// These typed wrappers give Swift one entry point per argument type.

typedef size_t (*kakapo_curl_data_callback)(char *data, size_t size, size_t count, void *userdata);

static inline CURLcode kakapo_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode kakapo_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode kakapo_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode kakapo_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode kakapo_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode kakapo_curl_setopt_callback(CURL *handle, CURLoption option, kakapo_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

typedef int (*kakapo_curl_progress_callback)(void *userdata, curl_off_t download_total, curl_off_t download_now,
                                             curl_off_t upload_total, curl_off_t upload_now);

static inline CURLcode kakapo_curl_setopt_progress(CURL *handle, kakapo_curl_progress_callback callback, void *userdata) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (code != CURLE_OK) return code;
    code = curl_easy_setopt(handle, CURLOPT_XFERINFODATA, userdata);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

static inline CURLcode kakapo_curl_setopt_blob(CURL *handle, CURLoption option, void *data, size_t length) {
    struct curl_blob blob;
    blob.data = data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}

static inline CURLcode kakapo_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// What a write callback returns to pause its transfer; libcurl hands the same bytes over again once
// the transfer is resumed.
static const size_t kakapo_curl_write_pause = CURL_WRITEFUNC_PAUSE;

// What a read callback returns to pause its transfer until resumed, or to abort it.
static const size_t kakapo_curl_read_pause = CURL_READFUNC_PAUSE;
static const size_t kakapo_curl_read_abort = CURL_READFUNC_ABORT;

static inline CURLcode kakapo_curl_resume(CURL *handle) {
    return curl_easy_pause(handle, CURLPAUSE_CONT);
}

static inline CURLMcode kakapo_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

// The next finished transfer of a multi handle and its result, or NULL when none has finished.
static inline CURL *kakapo_curl_multi_next_done(CURLM *multi, CURLcode *result) {
    int queued;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &queued))) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return message->easy_handle;
        }
    }
    return NULL;
}

static inline CURLcode kakapo_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_ALL);
}

#endif
