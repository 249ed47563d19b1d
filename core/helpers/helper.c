/*
 * osmeter-helper: the tiny program the process benchmarks exec, built twice (dynamically
 * and statically linked) so that program load can be measured for both.
 *   osmeter-helper exit          exit at once
 *   osmeter-helper report FD     write one byte to FD, then exit
 *   osmeter-helper hold FD       write one byte to FD, then wait to be killed
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    static const char usage[] = "usage: osmeter-helper exit | report FD | hold FD\n";
    if (write(2, usage, sizeof usage - 1) < 0)
        return 2;
    return 2;
}
