#include "CShareSoup.h"

SoupSession *CShareSoup_session_new(unsigned timeoutSeconds) {
    return soup_session_new_with_options("timeout", timeoutSeconds, NULL);
}

SoupServer *CShareSoup_server_new(const char *header) {
    return soup_server_new("server-header", header, NULL);
}
