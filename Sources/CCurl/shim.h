#ifndef KAKAPO_CCURL_SHIM_H
#define KAKAPO_CCURL_SHIM_H

#include <curl/curl.h>

#ifdef __linux__
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#endif

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

// A multi handle driven by socket readiness (curl_multi_socket_action): libcurl says which sockets to
// watch and when to call it back without one.
static inline CURLMcode kakapo_curl_multi_setopt_socket(CURLM *multi, curl_socket_callback callback, void *userdata) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
    if (code != CURLM_OK) return code;
    return curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, userdata);
}

static inline CURLMcode kakapo_curl_multi_setopt_timer(CURLM *multi, curl_multi_timer_callback callback,
                                                       void *userdata) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
    if (code != CURLM_OK) return code;
    return curl_multi_setopt(multi, CURLMOPT_TIMERDATA, userdata);
}

#ifdef __linux__
// epoll for the transfer loops (Linux): Swift's Glibc module has neither epoll nor eventfd, and
// struct epoll_event is packed.
static inline int kakapo_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int kakapo_eventfd_create(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

// Watches `fd` for reading and/or writing (CURL_POLL_IN, CURL_POLL_OUT or both), added or changed.
static inline int kakapo_epoll_watch(int epoll, int fd, int what) {
    struct epoll_event event = {0};
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = fd;
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

static inline int kakapo_epoll_unwatch(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

// Waits up to `timeout` ms; fills `fds` and `masks` (CURL_CSELECT_IN, _OUT, _ERR) with up to `capacity`
// (at most 64) ready descriptors and returns how many, or -1.
static inline int kakapo_epoll_wait(int epoll, int *fds, int *masks, int capacity, int timeout) {
    struct epoll_event events[64];
    int count = epoll_wait(epoll, events, capacity < 64 ? capacity : 64, timeout);
    for (int i = 0; i < count; i++) {
        uint32_t ready = events[i].events;
        fds[i] = events[i].data.fd;
        masks[i] = ((ready & (EPOLLIN | EPOLLHUP | EPOLLERR)) ? CURL_CSELECT_IN : 0) |
                   ((ready & EPOLLOUT) ? CURL_CSELECT_OUT : 0) | ((ready & EPOLLERR) ? CURL_CSELECT_ERR : 0);
    }
    return count;
}
#endif

#endif
