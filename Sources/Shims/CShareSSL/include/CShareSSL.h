// Thin shims over OpenSSL and libsrtp2 entry points that are macros, which Swift cannot import.
#pragma once
#include <openssl/ssl.h>
#include <openssl/bio.h>
#include <srtp2/srtp.h>

// BIO_set_mem_eof_return is a macro over BIO_ctrl (an empty memory BIO must say "retry", not EOF).
long CShareSSL_BIO_set_mem_eof_return(BIO *bio, int value);
// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
int CShareSSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
// SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl.
int CShareSSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
// SSL_CTX_set1_groups_list is a macro over SSL_CTX_ctrl.
int CShareSSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *groups);
// The SSL_OP_* flags are SSL_OP_BIT(n) macros (a cast and a shift) that Swift does not import.
uint64_t CShareSSL_CTX_set_dtls_options(SSL_CTX *ctx);
// DTLS_set_link_mtu is a macro over SSL_ctrl.
long CShareSSL_DTLS_set_link_mtu(SSL *ssl, long mtu);
// DTLSv1_get_timeout is a macro over SSL_ctrl; gives the time left on the retransmission timer.
long CShareSSL_DTLSv1_get_timeout(SSL *ssl, struct timeval *left);
// DTLSv1_handle_timeout is a macro over SSL_ctrl; retransmits the last flight if the timer expired.
long CShareSSL_DTLSv1_handle_timeout(SSL *ssl);
