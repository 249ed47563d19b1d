/*
 * osmeter-helper: the tiny program the process benchmarks exec, built twice (dynamically
 * and statically linked) so that program load can be measured for both.
 *   osmeter-helper exit          exit at once
 *   osmeter-helper report FD     write one byte to FD, then exit
 *   osmeter-helper hold FD       write one byte to FD, then wait to be killed
 *   osmeter-helper chain N FD    exec itself N-1 more times, then write one byte to FD
 *                                (UnixBench's execl throughput: a chain of execs)
 * Under an emulator without binfmt_misc the core starts it through OSMETER_EXEC_WRAPPER
 * (see harness.h); the chain then starts each next link the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* exec argv[0] chain N FD, through OSMETER_EXEC_WRAPPER's words when it is set. */
static void exec_next_link(char *self, char *n, char *fd)
{
    char wrapper[1024], *args[24];
    int k = 0;
    const char *w = getenv("OSMETER_EXEC_WRAPPER");
    if (w && *w && strlen(w) < sizeof wrapper) {
        strcpy(wrapper, w);
        for (char *tok = strtok(wrapper, " "); tok && k < 16; tok = strtok(NULL, " "))
            args[k++] = tok;
    }
    args[k++] = self;
    args[k++] = "chain";
    args[k++] = n;
    args[k++] = fd;
    args[k] = NULL;
    if (args[0] == self)
        execv(self, args);
    else
        execvp(args[0], args);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "exit") == 0)
        return 0;
    if (argc >= 3 && (strcmp(argv[1], "report") == 0 || strcmp(argv[1], "hold") == 0)) {
        int fd = atoi(argv[2]);
        char byte = 'x';
        if (write(fd, &byte, 1) != 1)
            return 1;
        if (strcmp(argv[1], "hold") == 0)
            for (;;)
                pause();
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "chain") == 0) {
        long n = atol(argv[2]);
        if (n > 1) {
            char next[24], *p = next + sizeof next; /* n-1 in decimal, without stdio */
            *--p = 0;
            for (long m = n - 1; m > 0; m /= 10)
                *--p = (char)('0' + m % 10);
            exec_next_link(argv[0], p, argv[3]);
            return 1; /* exec failed: the reader sees no byte */
        }
        char byte = 'x';
        return write(atoi(argv[3]), &byte, 1) == 1 ? 0 : 1;
    }
    static const char usage[] =
        "usage: osmeter-helper exit | report FD | hold FD | chain N FD\n";
    if (write(2, usage, sizeof usage - 1) < 0)
        return 2;
    return 2;
}
