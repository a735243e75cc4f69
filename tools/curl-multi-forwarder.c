/*
 * libcurl's event-driven ceiling on this machine: a bare HTTP/1.1 forwarder where one thread per core runs
 * an epoll loop that owns both its client connections and a curl multi handle driven by socket readiness
 * (curl_multi_socket_action; nginx's model, with libcurl as the upstream client). No thread hop, no
 * wake-ups, no NIO, no routes, no matching, no recording. It forwards GET and HEAD requests without bodies
 * to UPSTREAM and answers with the upstream's status, Content-Type and body.
 *
 *   cc -O2 -o /tmp/curl-multi-forwarder tools/curl-multi-forwarder.c -lcurl -lpthread
 *   /tmp/curl-multi-forwarder http://127.0.0.1:8080 9000 [THREADS]
 *
 * tools/bench-forwarder runs it as a candidate in the peers harness (S3, next to nginx proxy_pass).
 * It is a measuring tool, not a proxy: anything but a small GET or HEAD gets 501 and is closed.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "curl-body-buffer.h"

static const char *upstream;
static unsigned short port;

enum kind { LISTENER, CLIENT, UPSTREAM_SOCKET };

/* What an epoll event points at: a listener, a client connection or one of libcurl's sockets. */
struct watched {
    enum kind kind;
    int fd;
};

struct loop;

struct client {
    struct watched watched;
    struct loop *loop;
    char request[16384];
    size_t filled;
    int head;       /* the request in flight is a HEAD */
    CURL *easy;     /* the transfer in flight, or NULL */
    struct buffer body;
    char url[8192];
};

struct loop {
    int epoll;
    CURLM *multi;
    long timeout; /* libcurl's wish, in ms; -1 for none */
    CURL *idle[256];
    int idle_count;
};

static void close_client(struct client *client) {
    if (client->easy) {
        curl_multi_remove_handle(client->loop->multi, client->easy);
        curl_easy_cleanup(client->easy);
    }
    close(client->watched.fd);
    free(client->body.data);
    free(client);
}

/* Starts the transfer for the head at the front of the client's buffer, if one is complete. */
static int start_next(struct client *client) {
    char *end = memmem(client->request, client->filled, "\r\n\r\n", 4);
    if (!end) return client->filled < sizeof client->request ? 0 : -1;
    char method[16], target[4096];
    if (sscanf(client->request, "%15s %4095s", method, target) != 2) return -1;
    client->head = strcmp(method, "HEAD") == 0;
    if (!client->head && strcmp(method, "GET") != 0) {
        const char *refusal = "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        (void)!write(client->watched.fd, refusal, strlen(refusal));
        return -1;
    }
    size_t head_length = (size_t)(end - client->request) + 4;
    memmove(client->request, client->request + head_length, client->filled - head_length);
    client->filled -= head_length;
    snprintf(client->url, sizeof client->url, "%s%s", upstream, target);
    struct loop *loop = client->loop;
    CURL *easy = loop->idle_count > 0 ? loop->idle[--loop->idle_count] : curl_easy_init();
    client->easy = easy;
    client->body.length = 0;
    curl_easy_setopt(easy, CURLOPT_URL, client->url);
    curl_easy_setopt(easy, CURLOPT_NOBODY, client->head ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_HTTPGET, client->head ? 0L : 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &client->body);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, client);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle(loop->multi, easy);
    return 0;
}

static int answer(struct client *client, CURLcode code) {
    long status = 502;
    const char *type = NULL;
    if (code == CURLE_OK) {
        curl_easy_getinfo(client->easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(client->easy, CURLINFO_CONTENT_TYPE, &type);
    }
    char head[512];
    int length = snprintf(
        head, sizeof head, "HTTP/1.1 %ld OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n", status,
        type ? type : "application/octet-stream", client->body.length);
    struct iovec parts[2] = {{head, (size_t)length}, {client->body.data, client->head ? 0 : client->body.length}};
    /* Small answers: the socket's buffer takes them whole; a short write closes the connection. */
    ssize_t written = writev(client->watched.fd, parts, 2);
    return written == (ssize_t)(parts[0].iov_len + parts[1].iov_len) ? 0 : -1;
}

static void finish_transfers(struct loop *loop) {
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(loop->multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *easy = message->easy_handle;
        struct client *client;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&client);
        int failed = answer(client, message->data.result);
        curl_multi_remove_handle(loop->multi, easy);
        client->easy = NULL;
        if (loop->idle_count < 256) {
            loop->idle[loop->idle_count++] = easy;
        } else {
            curl_easy_cleanup(easy);
        }
        if (failed || start_next(client) < 0) close_client(client);
    }
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userdata, void *socketp) {
    (void)easy;
    struct loop *loop = userdata;
    struct watched *watched = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (watched) {
            epoll_ctl(loop->epoll, EPOLL_CTL_DEL, fd, NULL);
            free(watched);
            curl_multi_assign(loop->multi, fd, NULL);
        }
        return 0;
    }
    struct epoll_event event = {0};
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    if (!watched) {
        watched = malloc(sizeof *watched);
        watched->kind = UPSTREAM_SOCKET;
        watched->fd = fd;
        curl_multi_assign(loop->multi, fd, watched);
        event.data.ptr = watched;
        epoll_ctl(loop->epoll, EPOLL_CTL_ADD, fd, &event);
    } else {
        event.data.ptr = watched;
        epoll_ctl(loop->epoll, EPOLL_CTL_MOD, fd, &event);
    }
    return 0;
}

static int on_timer(CURLM *multi, long timeout, void *userdata) {
    (void)multi;
    ((struct loop *)userdata)->timeout = timeout;
    return 0;
}

static int listen_socket(void) {
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(listener, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 512) != 0) {
        perror("listen");
        exit(1);
    }
    return listener;
}

static void *run(void *argument) {
    (void)argument;
    struct loop loop = {.epoll = epoll_create1(0), .multi = curl_multi_init(), .timeout = -1};
    curl_multi_setopt(loop.multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(loop.multi, CURLMOPT_SOCKETDATA, &loop);
    curl_multi_setopt(loop.multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(loop.multi, CURLMOPT_TIMERDATA, &loop);
    struct watched listener = {.kind = LISTENER, .fd = listen_socket()};
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = &listener};
    epoll_ctl(loop.epoll, EPOLL_CTL_ADD, listener.fd, &event);
    struct epoll_event events[128];
    int running = 0;
    for (;;) {
        int count = epoll_wait(loop.epoll, events, 128, (int)loop.timeout);
        if (count < 0 && errno != EINTR) break;
        if (count == 0) curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
        for (int index = 0; index < count; index++) {
            struct watched *watched = events[index].data.ptr;
            if (watched->kind == LISTENER) {
                int fd;
                while ((fd = accept4(listener.fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct client *client = calloc(1, sizeof *client);
                    client->watched = (struct watched){.kind = CLIENT, .fd = fd};
                    client->loop = &loop;
                    struct epoll_event added = {.events = EPOLLIN, .data.ptr = client};
                    epoll_ctl(loop.epoll, EPOLL_CTL_ADD, fd, &added);
                }
            } else if (watched->kind == CLIENT) {
                struct client *client = (struct client *)watched;
                ssize_t read_count =
                    read(client->watched.fd, client->request + client->filled, sizeof client->request - client->filled);
                if (read_count == 0 || (read_count < 0 && errno != EAGAIN)) {
                    close_client(client);
                    continue;
                }
                if (read_count > 0) client->filled += (size_t)read_count;
                if (!client->easy && start_next(client) < 0) close_client(client);
            } else {
                int mask = 0;
                if (events[index].events & EPOLLIN) mask |= CURL_CSELECT_IN;
                if (events[index].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
                if (events[index].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
                curl_multi_socket_action(loop.multi, watched->fd, mask, &running);
            }
        }
        /* New transfers were added: let libcurl start them (it asks for a 0 ms timeout). */
        if (loop.timeout == 0) curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
        finish_transfers(&loop);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s UPSTREAM-URL PORT [THREADS]\n", argv[0]);
        return 2;
    }
    upstream = argv[1];
    port = (unsigned short)atoi(argv[2]);
    long threads = argc == 4 ? atol(argv[3]) : sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    curl_global_init(CURL_GLOBAL_ALL);
    pthread_t workers[64];
    for (long index = 0; index < threads && index < 64; index++) pthread_create(&workers[index], NULL, run, NULL);
    pthread_join(workers[0], NULL);
    return 0;
}
