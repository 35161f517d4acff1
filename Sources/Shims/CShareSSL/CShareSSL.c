#include "CShareSSL.h"

long CShareSSL_BIO_set_mem_eof_return(BIO *bio, int value) { return BIO_set_mem_eof_return(bio, value); }
int CShareSSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
int CShareSSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_max_proto_version(ctx, version); }
int CShareSSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *groups) { return (int)SSL_CTX_set1_groups_list(ctx, groups); }
// No MTU probing (there is no socket: the link MTU is set), no tickets, no renegotiation (WebRTC never renegotiates DTLS).
uint64_t CShareSSL_CTX_set_dtls_options(SSL_CTX *ctx) { return SSL_CTX_set_options(ctx, SSL_OP_NO_QUERY_MTU | SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION); }
long CShareSSL_DTLS_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
long CShareSSL_DTLSv1_get_timeout(SSL *ssl, struct timeval *left) { return DTLSv1_get_timeout(ssl, left); }
long CShareSSL_DTLSv1_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
