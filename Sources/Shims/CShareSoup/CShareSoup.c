#include "CShareSoup.h"

SoupSession *CShareSoup_session_new(unsigned timeoutSeconds) {
    return soup_session_new_with_options("timeout", timeoutSeconds, NULL);
}
