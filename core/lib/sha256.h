/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), and bytes as hex: for authenticating
 * the network peer (servers/peer_protocol.c).
 */
#ifndef OSMETER_LIB_SHA256_H
#define OSMETER_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct om_sha256 {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    size_t fill;
};
void om_sha256_init(struct om_sha256 *s);
void om_sha256_update(struct om_sha256 *s, const void *data, size_t len);
void om_sha256_final(struct om_sha256 *s, uint8_t digest[32]);
void om_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    uint8_t mac[32]);
/* FIPS 180-2 and RFC 4231 test vectors; 0 when all pass (prints failures on stderr). */
int om_sha256_self_test(int verbose);

/* n bytes as 2n lower-case hex digits and a NUL. */
void om_hex_encode(const uint8_t *p, size_t n, char *out);
/* Exactly 2n hex digits (lower case) into n bytes; 0, or -1 for anything else. */
int om_hex_decode(const char *hex, uint8_t *out, size_t n);

#endif
