// Thin shims over libsoup and GObject entry points that are macros or variadic.
#pragma once
#include <libsoup/soup.h>

// soup_server_new is variadic: a server that names itself in its Server header.
SoupServer *CShareSoup_server_new(const char *header);

// Answers a request from its headers alone and closes the connection, so its body is never read:
// libsoup 3.2 reads a whole request body before any handler's answer goes out, even a refusal.
// `response` is the complete HTTP response (status line, headers, body); it is copied.
void CShareSoup_answer_and_close(SoupServerMessage *msg, const char *response, size_t length);

// The bytes of a TCP socket's output its peer has acknowledged (TCP_INFO's tcpi_bytes_acked, which
// glibc's struct tcp_info lacks); -1 when the kernel does not say.
long long CShareSoup_tcp_bytes_acked(int fd);

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34+, a GNU extension): the child closes every
/// descriptor from `from` up. `actions` is a posix_spawn_file_actions_t.
int CShareSoup_spawn_close_from(void *actions, int from);

/// posix_spawn_file_actions_addchdir_np (glibc 2.29+, a GNU extension): the child starts in `path`.
int CShareSoup_spawn_chdir(void *actions, const char *path);
