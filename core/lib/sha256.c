/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), with their published test vectors:
 * what authenticates the network peer's control connection (servers/peer_protocol.c),
 * written out because the core depends on nothing but the C library.
 */
#include "sha256.h"

#include <stdio.h>
#include <string.h>

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct om_sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void om_sha256_init(struct om_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->length = 0;
    s->fill = 0;
}

void om_sha256_update(struct om_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->length += len;
    while (len > 0) {
        size_t take = 64 - s->fill < len ? 64 - s->fill : len;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        len -= take;
        if (s->fill == 64) {
            sha256_block(s, s->block);
            s->fill = 0;
        }
    }
}

void om_sha256_final(struct om_sha256 *s, uint8_t digest[32])
{
    uint64_t bits = s->length * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (s->fill < 56 ? 56 : 120) - s->fill;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    om_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(s->h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void om_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    uint8_t mac[32])
{
    uint8_t k[64] = {0}, ipad[64], opad[64], inner[32];
    struct om_sha256 s;
    if (keylen > 64) { /* long keys are hashed first (RFC 2104) */
        om_sha256_init(&s);
        om_sha256_update(&s, key, keylen);
        om_sha256_final(&s, k);
    } else {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < 64; i++) {
        ipad[i] = k[i] ^ 0x36;
        opad[i] = k[i] ^ 0x5c;
    }
    om_sha256_init(&s);
    om_sha256_update(&s, ipad, 64);
    om_sha256_update(&s, msg, msglen);
    om_sha256_final(&s, inner);
    om_sha256_init(&s);
    om_sha256_update(&s, opad, 64);
    om_sha256_update(&s, inner, 32);
    om_sha256_final(&s, mac);
}

void om_hex_encode(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
}

int om_hex_decode(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < 2 * n; i++) {
        char c = hex[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
    }
    return hex[2 * n] == 0 ? 0 : -1;
}

int om_sha256_self_test(int verbose)
{
    static const struct {
        const char *msg;
        long repeat;
        const char *digest;
    } sha[] = {
        /* FIPS 180-2 Appendix B */
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    };
    /* RFC 4231 test cases 1, 2, 6 (short key, "Jefe", key longer than a block) */
    uint8_t key1[20], key6[131];
    memset(key1, 0x0b, sizeof key1);
    memset(key6, 0xaa, sizeof key6);
    const struct {
        const void *key;
        size_t keylen;
        const char *msg;
        const char *mac;
    } hmac[] = {
        {key1, sizeof key1, "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", 4, "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {key6, sizeof key6, "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    };
    int failures = 0;
    uint8_t d[32];
    char hex[65];
    for (size_t i = 0; i < sizeof sha / sizeof sha[0]; i++) {
        struct om_sha256 s;
        om_sha256_init(&s);
        for (long r = 0; r < sha[i].repeat; r++)
            om_sha256_update(&s, sha[i].msg, strlen(sha[i].msg));
        om_sha256_final(&s, d);
        om_hex_encode(d, 32, hex);
        int ok = strcmp(hex, sha[i].digest) == 0;
        failures += !ok;
        if (verbose || !ok)
            fprintf(stderr, "sha256 vector %zu: %s\n", i + 1, ok ? "ok" : "FAILED");
    }
    for (size_t i = 0; i < sizeof hmac / sizeof hmac[0]; i++) {
        om_hmac_sha256(hmac[i].key, hmac[i].keylen, hmac[i].msg, strlen(hmac[i].msg), d);
        om_hex_encode(d, 32, hex);
        int ok = strcmp(hex, hmac[i].mac) == 0;
        failures += !ok;
        if (verbose || !ok)
            fprintf(stderr, "hmac-sha256 vector %zu: %s\n", i + 1, ok ? "ok" : "FAILED");
    }
    return failures ? -1 : 0;
}
