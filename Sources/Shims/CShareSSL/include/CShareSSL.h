// Thin shims over OpenSSL and libsrtp2 entry points that are macros, which Swift cannot import.
#pragma once
#include <openssl/ssl.h>
#include <openssl/bio.h>
#include <srtp2/srtp.h>

// BIO_get_mem_data is a macro over BIO_ctrl.
long CShareSSL_BIO_get_mem_data(BIO *bio, char **data);
