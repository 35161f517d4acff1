#define _GNU_SOURCE
#include "CShareSoup.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <spawn.h>
#include <sys/socket.h>

SoupServer *CShareSoup_server_new(const char *header) {
    return soup_server_new("server-header", header, NULL);
}

typedef struct {
    GIOStream *stream;
    char *response;
} CShareSoupAnswer;

static void CShareSoup_answer_closed(GObject *source, GAsyncResult *result, gpointer data) {
    g_io_stream_close_finish(G_IO_STREAM(source), result, NULL);
    g_object_unref(source);
}

static void CShareSoup_answer_written(GObject *source, GAsyncResult *result, gpointer data) {
    CShareSoupAnswer *answer = data;
    g_output_stream_write_all_finish(G_OUTPUT_STREAM(source), result, NULL, NULL);
    g_io_stream_close_async(answer->stream, G_PRIORITY_DEFAULT, NULL, CShareSoup_answer_closed, NULL);
    g_free(answer->response);
    g_free(answer);
}

void CShareSoup_answer_and_close(SoupServerMessage *msg, const char *response, size_t length) {
    GIOStream *stream = soup_server_message_steal_connection(msg);
    if (stream == NULL) return;
    CShareSoupAnswer *answer = g_new0(CShareSoupAnswer, 1);
    answer->stream = stream;  // released once closed
    answer->response = g_memdup2(response, length);
    g_output_stream_write_all_async(g_io_stream_get_output_stream(stream), answer->response, length,
                                    G_PRIORITY_DEFAULT, NULL, CShareSoup_answer_written, answer);
}

long long CShareSoup_tcp_bytes_acked(int fd) {
    struct tcp_info info;
    socklen_t size = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return -1;
    if (size < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked) return -1;
    return (long long)info.tcpi_bytes_acked;
}

int CShareSoup_spawn_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, from);
}

int CShareSoup_spawn_chdir(void *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np((posix_spawn_file_actions_t *)actions, path);
}
