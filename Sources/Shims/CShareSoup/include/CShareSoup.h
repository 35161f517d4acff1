// Thin shims over libsoup and GObject entry points that are macros or variadic.
#pragma once
#include <libsoup/soup.h>

// soup_session_new_with_options and g_object_set are variadic: a session with a timeout in seconds.
SoupSession *CShareSoup_session_new(unsigned timeoutSeconds);

// soup_server_new is variadic: a server that names itself in its Server header.
SoupServer *CShareSoup_server_new(const char *header);
