/*
 * The far end of the network benchmarks, and the protocol both ends speak.
 *
 * `osmeter-core serve [--listen ADDR:PORT]` runs it on another host; with peer="" a
 * benchmark forks the same session code as a local child on loopback, so one code
 * path is measured and tested either way.  The pieces: peer_protocol.c (what both ends
 * speak), peer.c (the far end's session), peer_listener.c (serve's accept loop),
 * serve_main.c (serve's command line), lib/sha256.c (the MAC).
 *
 * Control connection (TCP, one text line per message, '\n'-terminated, < 256 bytes):
 *   far:  OSMETER-PEER 1 CHALLENGE <server nonce, 32 hex>     (or BUSY <why>, then close)
 *   near: AUTH <client nonce, 32 hex> <HMAC-SHA256(secret, "osmeter-peer-1 client " sn " " cn)>
 *   far:  OK <HMAC-SHA256(secret, "osmeter-peer-1 server " sn " " cn)>   or ERR <why>, close
 *         (or BUSY <why>, close: another client authenticated first)
 * then requests, each answered with PORT <port> [...], OK [...] or ERR <why>:
 *   TCP_SINK <buf> <total> <count>  accept one connection; <count> times read <total> bytes
 *                                   in <buf>-sized reads and answer one byte; then OK
 *   TCP_ECHO <size>                 accept one connection; echo <size>-byte messages until EOF
 *   TCP_ACCEPT                      accept and close connections; SYNC / END on the control
 *                                   line drain the queue and answer OK <accepted>
 *   UDP_SINK <size> <count>         count datagrams until <count>, a zero-length datagram or
 *                                   1 s of silence: OK <datagrams> <bytes> <first-to-last ns>
 *   UDP_ECHO <size>                 echo datagrams until a zero-length one: OK <echoed>
 *   QUIT
 * Data sockets are bound to the control connection's local address and take traffic only
 * from the control connection's remote address.  The secret never crosses the wire.
 */
#ifndef OSMETER_SERVERS_PEER_H
#define OSMETER_SERVERS_PEER_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OM_PEER_DEFAULT_PORT 7227
#define OM_PEER_SECRET_ENV "OSMETER_PEER_SECRET"
#define OM_PEER_LINE 256

/* ---- the far end ---------------------------------------------------------------- */
struct om_peer_limits {
    long max_seconds;     /* a session ends (its process exits) after this long */
    long long max_bytes;  /* data bytes one session may move, both directions */
    int quiet;            /* no log lines on stderr (the local far end of a benchmark) */
    pid_t *session_owner; /* `serve`: the slot shared by all connections (pid of the one
                             authenticated session, or 0); NULL: no other connections */
};
/* `serve` holds up to this many connections that have not authenticated yet, each for
 * at most the authentication timeout; when all places are taken the oldest is dropped
 * (OM_PEER_EVICT_SIGNAL).  Only an authenticated client takes the one session. */
#define OM_PEER_MAX_PENDING 16
#define OM_PEER_AUTH_TIMEOUT_MS 5000
#define OM_PEER_EVICT_SIGNAL SIGUSR1
extern const struct om_peer_limits om_peer_default_limits;

/* Serve one session on an accepted control connection; call it in a process of its own
 * (it arms alarm() for the duration limit).  Returns an exit status.  (peer.c) */
int om_peer_session(int ctl, const char *secret, const struct om_peer_limits *lim);
/* `serve`: accept on lfd and fork a session per connection until SIGINT, SIGTERM or
 * SIGHUP; returns an exit status.  (peer_listener.c) */
int om_peer_listen(int lfd, const char *secret, struct om_peer_limits *lim);
/* What a client is told while another one's session runs. */
extern const char om_peer_busy_reason[];
/* A line on stderr, "osmeter-core serve[pid]: ...", unless the session is quiet. */
void om_peer_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- both ends (peer_protocol.c) --------------------------------------------------- */
/* One line, '\n' appended; 0, or -1 when it is too long or cannot be sent. */
int om_peer_send_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int om_peer_vsend_line(int fd, const char *fmt, va_list ap);
/* HMAC-SHA256(secret, "osmeter-peer-1 <role> <sn> <cn>") as hex: each end's proof. */
void om_peer_mac(const char *secret, const char *role, const char *sn, const char *cn,
                 char out[65]);
/* Compare two MACs in constant time. */
int om_peer_same_mac(const char *a, const char *b);
/* Read one line (without '\n') within timeout_ms.  Returns its length, or -1 on EOF or
 * error, -2 on timeout, -3 when the line is too long. */
int om_peer_read_line(int fd, char *line, size_t cap, int timeout_ms);
/* Answer the challenge; 0, or -1 with a one-line reason in err. */
int om_peer_handshake(int ctl, const char *secret, char *err, size_t errlen);
/* Random bytes as hex (2*n chars + NUL) from the system's generator; 0 or -1. */
int om_peer_random_hex(char *out, size_t n);

/* "HOST:PORT", "[V6ADDR]:PORT", "HOST" or a bare IPv6 address (default port); 0 or -1. */
int om_peer_parse_address(const char *s, char *host, size_t hostlen, int *port);

struct sockaddr_storage;
void om_sock_set_port(struct sockaddr_storage *a, int port);
int om_sock_port(const struct sockaddr_storage *a);
/* "1.2.3.4:5" or "[::1]:5" */
void om_sock_format(const struct sockaddr_storage *a, char *out, size_t len);
/* The same IP address (ports aside). */
int om_sock_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* SO_RCVTIMEO and SO_SNDTIMEO, so a vanished other end cannot hang a transfer. */
void om_sock_timeouts(int fd, int ms);
/* Make a UDP socket able to send and receive `size`-byte datagrams: the BSDs and macOS
 * refuse a datagram above the send buffer (EMSGSIZE; net.inet.udp.maxdgram, 9216 bytes
 * by default) and drop one the receive buffer cannot hold.  Raises SO_SNDBUF to the
 * datagram and headroom, SO_RCVBUF to two of them, where they are smaller (Linux's
 * defaults already are larger); *sndbuf and *rcvbuf get what is in force.  0, or -1
 * when the system refused (its maximum socket buffer is too small). */
int om_sock_fit_datagram(int fd, long long size, int *sndbuf, int *rcvbuf);

/* ---- transfers both ends use ------------------------------------------------------ */
/* Write total bytes in chunk-sized writes to fd.  0, or -1 with errno. */
int om_send_data(int fd, long long total, size_t chunk, const char *buf);
/* om_send_data(), then wait for the one-byte answer on ackfd.  0, or -1 with errno. */
int om_send_transfer(int fd, int ackfd, long long total, size_t chunk, char *buf);
/* Read total bytes in chunk-sized reads from fd, then answer one byte on ackfd. */
int om_sink_transfer(int fd, int ackfd, long long total, size_t chunk, char *buf);

#endif
