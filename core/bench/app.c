/*
 * Application tests after Camacho (2006), Tests 1 and 3: what people actually do, timed
 * as whole processes with core/lib/program.c (wall clock, CPU time, peak memory):
 *
 *   app.start.*          start-up of programs that are installed (a shell, interpreters,
 *                        an editor in batch mode);
 *   app.vim_open         Vim opening a large generated text file (470 MB in the study);
 *   app.convert.*        ImageMagick JPEG -> PNG and ffmpeg AVI -> MPEG, on inputs each
 *                        test generates itself (no download);
 *   app.cpu.avi_play     the CPU share that a real-time-paced decode of an AVI consumes
 *                        (ffmpeg -re, decode only; the study watched xine play one).
 *
 * A program that is not installed makes its test skip with "<program> not installed".
 * Inputs are generated outside the timing, in the scratch directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/program.h"

#define GEN_TIMEOUT_S 1800.0 /* generating an input (a long video at the study's size) */

/* The program's full path, or NULL after noting nothing: the caller skips. */
static const char *find(const char *name, char *buf, size_t len)
{
    return prog_find(name, buf, len);
}

/* Records the first line of `prog flag` (its version) as a note. */
static void note_version(struct om_ctx *ctx, const char *prog, const char *flag)
{
    char out[512];
    char *argv[] = {(char *)prog, (char *)flag, NULL};
    prog_capture(argv, out, sizeof out, 30);
    out[strcspn(out, "\n")] = 0;
    om_note(ctx, "version", "%s", *out ? out : "(no version output)");
}

/*
 * Runs argv `warmup` times untimed, then `samples` times timed, and emits wall, user,
 * system, max_rss (and cpu = (user+system)/wall when cpu_metric is set).
 */
static int time_program(struct om_ctx *ctx, char *const *argv, double timeout_s, int cpu_metric)
{
    struct prog_spec spec = {.argv = argv, .timeout_s = timeout_s};
    long long warmup = om_int(ctx, "warmup"), samples = om_int(ctx, "samples");
    char why[512];
    for (long long i = 0; i < warmup + samples; i++) {
        struct prog_result res;
        if (prog_run(&spec, &res))
            return om_fail(ctx, "cannot start %s: %s", argv[0], strerror(errno));
        if (!prog_succeeded(&res)) {
            prog_describe_failure(&res, timeout_s, why, sizeof why);
            return om_fail(ctx, "%s %s", argv[0], why);
        }
        if (i < warmup)
            continue;
        om_sample(ctx, "wall", OM_NO_X, res.wall_ns);
        om_sample(ctx, "user", OM_NO_X, res.user_ns);
        om_sample(ctx, "system", OM_NO_X, res.sys_ns);
        om_sample(ctx, "max_rss", OM_NO_X, res.max_rss_bytes);
        if (cpu_metric && res.wall_ns > 0)
            om_sample(ctx, "cpu", OM_NO_X, 100.0 * (res.user_ns + res.sys_ns) / res.wall_ns);
    }
    return OM_OK;
}

/* Runs an input generator; on failure, reports its last line of output. */
static int generate(struct om_ctx *ctx, char *const *argv, const char *what)
{
    char log[4096 + 16], why[512];
    snprintf(log, sizeof log, "%s/generate.log", om_scratch_dir());
    struct prog_spec spec = {.argv = argv, .out_path = log, .timeout_s = GEN_TIMEOUT_S};
    struct prog_result res;
    if (prog_run(&spec, &res))
        return om_fail(ctx, "cannot start %s: %s", argv[0], strerror(errno));
    if (prog_succeeded(&res)) {
        unlink(log);
        return OM_OK;
    }
    prog_describe_failure(&res, GEN_TIMEOUT_S, why, sizeof why);
    char tail[300];
    prog_last_line(log, tail, sizeof tail);
    unlink(log);
    return om_fail(ctx, "generating %s: %s %s%s%s", what, argv[0], why, *tail ? ": " : "", tail);
}

static int need_scratch(struct om_ctx *ctx)
{
    if (!om_scratch_dir())
        return om_fail(ctx, "cannot create a scratch directory: %s", strerror(errno));
    return OM_OK;
}

/* Skip (never fill the disk or memory of a shared machine) when bytes will not fit. */
static int check_room(struct om_ctx *ctx, long long bytes, int in_memory)
{
    struct statvfs vfs;
    if (statvfs(om_scratch_dir(), &vfs) == 0) {
        double avail = (double)vfs.f_bavail * (double)vfs.f_frsize;
        if (avail < (double)bytes + 256.0 * 1048576)
            return om_skip(ctx, "not enough free disk space in %s for %lld MiB",
                           om_scratch_dir(), bytes >> 20);
    }
#ifdef _SC_AVPHYS_PAGES
    if (in_memory) {
        double avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        if (avail > 0 && avail < 2.0 * (double)bytes + 256.0 * 1048576)
            return om_skip(ctx, "not enough free memory to open a %lld MiB file", bytes >> 20);
    }
#endif
    return OM_OK;
}

/* ---- start-up of installed programs ---------------------------------------------- */

static int start_program(struct om_ctx *ctx, char *const *argv)
{
    char path[4096];
    if (!find(argv[0], path, sizeof path))
        return om_skip(ctx, "%s not installed", argv[0]);
    om_note(ctx, "program", "%s", path);
    return time_program(ctx, argv, 60, 0);
}

static int run_start_sh(struct om_ctx *ctx)
{
    char *argv[] = {"sh", "-c", ":", NULL};
    return start_program(ctx, argv);
}

static int run_start_bash(struct om_ctx *ctx)
{
    char *argv[] = {"bash", "-c", ":", NULL};
    return start_program(ctx, argv);
}

static int run_start_python3(struct om_ctx *ctx)
{
    char *argv[] = {"python3", "-c", "pass", NULL};
    return start_program(ctx, argv);
}

static int run_start_perl(struct om_ctx *ctx)
{
    char *argv[] = {"perl", "-e", "1", NULL};
    return start_program(ctx, argv);
}

/* Vim in Ex batch mode (-es: no terminal, no vimrc), no viminfo, no swap file. */
static int run_start_vim(struct om_ctx *ctx)
{
    char *argv[] = {"vim", "-es", "-i", "NONE", "-n", "-c", "qa!", NULL};
    return start_program(ctx, argv);
}

/* ---- Vim opening a large file ----------------------------------------------------- */

static int write_text_file(struct om_ctx *ctx, const char *path, long long bytes)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return om_fail(ctx, "create %s: %s", path, strerror(errno));
    static const char words[] = "the quick brown fox jumps over the lazy dog";
    long long written = 0;
    for (long long line = 1; written < bytes; line++) {
        int n = fprintf(f, "%010lld %s %s\n", line, words, words + (line % 20));
        if (n < 0)
            break;
        written += n;
    }
    if (fclose(f) != 0 || written < bytes)
        return om_fail(ctx, "write %s: %s", path, strerror(errno));
    return OM_OK;
}

static int run_vim_open(struct om_ctx *ctx)
{
    char path[4096], file[4096 + 16];
    if (!find("vim", path, sizeof path))
        return om_skip(ctx, "vim not installed");
    long long bytes = om_int(ctx, "size");
    int rc;
    if ((rc = need_scratch(ctx)) || (rc = check_room(ctx, bytes, 1)))
        return rc;
    snprintf(file, sizeof file, "%s/big.txt", om_scratch_dir());
    if ((rc = write_text_file(ctx, file, bytes)))
        return rc;
    note_version(ctx, "vim", "--version");
    om_note(ctx, "file_bytes", "%lld", bytes);
    /* -c runs after the file is loaded, so the timed run reads the whole file. */
    char *argv[] = {"vim", "-es", "-i", "NONE", "-n", "-c", "qa!", file, NULL};
    rc = time_program(ctx, argv, 3600, 0);
    unlink(file);
    return rc;
}

/* ---- ImageMagick: JPEG -> PNG ----------------------------------------------------- */

static int is_script(const char *path)
{
    char head[2] = {0, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, head, 2);
    close(fd);
    return n == 2 && head[0] == '#' && head[1] == '!';
}

/* The real ImageMagick: a `convert` whose -version says so (a stand-in of that name may
 * come first in PATH), else ImageMagick 7's `magick`.  A binary is preferred to a script
 * that passes its calls on (that would time the script too).  Fills tool with its path. */
static int find_imagemagick(char *tool, size_t len, char *stand_in, size_t slen)
{
    const char *path = getenv("PATH");
    char out[1024], cand[4096], script[4096] = "";
    stand_in[0] = 0;
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        for (int k = 0; k < 2 && n > 0; k++) {
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, k == 0 ? "convert" : "magick");
            if (access(cand, X_OK))
                continue;
            char *argv[] = {cand, "-version", NULL};
            if (prog_capture(argv, out, sizeof out, 30) == 0 && strstr(out, "ImageMagick")) {
                if (!is_script(cand)) {
                    snprintf(tool, len, "%s", cand);
                    return 0;
                }
                if (!script[0])
                    snprintf(script, sizeof script, "%s", cand);
            } else if (!stand_in[0]) {
                snprintf(stand_in, slen, "%s", cand);
            }
        }
        p += n + (p[n] == ':');
    }
    if (script[0]) {
        snprintf(tool, len, "%s", script);
        return 0;
    }
    return -1;
}

static int run_jpeg_png(struct om_ctx *ctx)
{
    char tool[4096], stand_in[4096];
    if (find_imagemagick(tool, sizeof tool, stand_in, sizeof stand_in))
        return *stand_in ? om_skip(ctx, "ImageMagick not installed (%s is not ImageMagick)",
                                   stand_in)
                         : om_skip(ctx, "ImageMagick not installed");
    int rc;
    if ((rc = need_scratch(ctx)))
        return rc;
    long long side = om_int(ctx, "size");
    char in[4096 + 16], out[4096 + 16], geometry[64];
    snprintf(in, sizeof in, "%s/in.jpg", om_scratch_dir());
    snprintf(out, sizeof out, "%s/out.png", om_scratch_dir());
    snprintf(geometry, sizeof geometry, "%lldx%lld", side, side);
    om_note(ctx, "program", "%s", tool);
    note_version(ctx, tool, "-version");
    /* A plasma fractal with a fixed seed: photo-like detail, the same input every time. */
    char *gen[] = {tool, "-seed", "1", "-size", geometry, "plasma:fractal", "-quality", "90",
                   in, NULL};
    if ((rc = generate(ctx, gen, "the JPEG input")))
        return rc;
    om_note(ctx, "input", "%s plasma fractal, JPEG quality 90", geometry);
    char *argv[] = {tool, in, out, NULL};
    rc = time_program(ctx, argv, 3600, 0);
    unlink(in);
    unlink(out);
    return rc;
}

/* ---- ffmpeg: AVI -> MPEG, and a real-time-paced decode ------------------------------ */

/* testsrc video (640x480, 25 fps, MPEG-4 Part 2 as DivX/Xvid AVIs were) + a sine tone. */
static int make_avi(struct om_ctx *ctx, const char *avi, long long seconds)
{
    char video[128], audio[128];
    snprintf(video, sizeof video, "testsrc=duration=%lld:size=640x480:rate=25", seconds);
    snprintf(audio, sizeof audio, "sine=frequency=440:sample_rate=44100:duration=%lld",
             seconds);
    char *gen[] = {"ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                   "-f", "lavfi", "-i", video, "-f", "lavfi", "-i", audio,
                   "-c:v", "mpeg4", "-q:v", "3", "-c:a", "pcm_s16le", (char *)avi, NULL};
    int rc = generate(ctx, gen, "the AVI input");
    if (rc == OM_OK)
        om_note(ctx, "input", "%lld s of testsrc 640x480 25 fps MPEG-4 + 44.1 kHz PCM, AVI",
                seconds);
    return rc;
}

static int ffmpeg_setup(struct om_ctx *ctx, char *avi, size_t len)
{
    char path[4096];
    if (!find("ffmpeg", path, sizeof path))
        return om_skip(ctx, "ffmpeg not installed");
    int rc;
    if ((rc = need_scratch(ctx)))
        return rc;
    om_note(ctx, "program", "%s", path);
    note_version(ctx, "ffmpeg", "-version");
    snprintf(avi, len, "%s/in.avi", om_scratch_dir());
    return make_avi(ctx, avi, om_int(ctx, "seconds"));
}

static int run_avi_mpeg(struct om_ctx *ctx)
{
    char avi[4096 + 16], mpg[4096 + 16];
    int rc = ffmpeg_setup(ctx, avi, sizeof avi);
    if (rc)
        return rc;
    snprintf(mpg, sizeof mpg, "%s/out.mpg", om_scratch_dir());
    char *argv[] = {"ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                    "-i", avi, "-c:v", "mpeg1video", "-q:v", "4", "-c:a", "mp2",
                    "-f", "mpeg", mpg, NULL};
    rc = time_program(ctx, argv, 3600, 0);
    unlink(avi);
    unlink(mpg);
    return rc;
}

static int run_avi_play(struct om_ctx *ctx)
{
    char avi[4096 + 16];
    int rc = ffmpeg_setup(ctx, avi, sizeof avi);
    if (rc)
        return rc;
    /* -re reads the input at its native rate, as a player does; decoded frames are
     * discarded (no scaling or display, unlike the study's xine). */
    char *argv[] = {"ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error",
                    "-re", "-i", avi, "-f", "null", "-", NULL};
    om_note(ctx, "duration", "%lld s played per sample (the study's length is not stated; "
            "30 s until issue 21: a share of CPU time needs no longer)", om_int(ctx, "seconds"));
    rc = time_program(ctx, argv, 3600, 1);
    unlink(avi);
    return rc;
}

/* XMMS in the study: N players at once.  Here N real-time-paced ffmpeg decodes of a
 * generated MPEG audio file (MP2, 192 kbit/s stereo), started together by one shell that
 * waits for them all, so its rusage holds every decoder's CPU time. */
static int run_audio_play(struct om_ctx *ctx)
{
    char path[4096], audio[4096 + 16], src[128];
    if (!find("ffmpeg", path, sizeof path))
        return om_skip(ctx, "ffmpeg not installed");
    int rc;
    if ((rc = need_scratch(ctx)))
        return rc;
    long long seconds = om_int(ctx, "seconds");
    om_note(ctx, "program", "%s", path);
    note_version(ctx, "ffmpeg", "-version");
    snprintf(audio, sizeof audio, "%s/in.mp2", om_scratch_dir());
    snprintf(src, sizeof src, "sine=frequency=440:sample_rate=44100:duration=%lld", seconds);
    char *gen[] = {"ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                   "-f", "lavfi", "-i", src, "-ac", "2", "-c:a", "mp2", "-b:a", "192k",
                   audio, NULL};
    if ((rc = generate(ctx, gen, "the audio input")))
        return rc;
    om_note(ctx, "input", "%lld s of a 440 Hz tone, MP2 192 kbit/s stereo 44.1 kHz", seconds);
    om_note(ctx, "duration", "%lld s played per sample (the study's length is not stated; "
            "30 s until issue 21: a share of CPU time needs no longer)", seconds);
    long long counts[OM_MAX_LIST];
    int nc = om_list(ctx, "instances", counts);
    long long warmup = om_int(ctx, "warmup"), samples = om_int(ctx, "samples");
    for (int c = 0; c < nc && rc == OM_OK; c++) {
        /* The count and the file arrive as $1 and $2: no quoting of paths in a script. */
        static const char script[] =
            "p=; i=0; while [ $i -lt \"$1\" ]; do i=$((i+1)); ffmpeg -nostdin -loglevel "
            "error -re -i \"$2\" -f null - & p=\"$p $!\"; done; r=0; "
            "for x in $p; do wait $x || r=1; done; exit $r";
        char count[32];
        snprintf(count, sizeof count, "%lld", counts[c]);
        char *argv[] = {"/bin/sh", "-c", (char *)script, "sh", count, audio, NULL};
        struct prog_spec spec = {.argv = argv, .timeout_s = (double)seconds * 4 + 120};
        char why[512];
        for (long long i = 0; i < warmup + samples; i++) {
            struct prog_result res;
            if (prog_run(&spec, &res))
                return om_fail(ctx, "cannot start /bin/sh: %s", strerror(errno));
            if (!prog_succeeded(&res)) {
                prog_describe_failure(&res, spec.timeout_s, why, sizeof why);
                return om_fail(ctx, "%lld players: a decoder failed: %s", counts[c], why);
            }
            if (i >= warmup && res.wall_ns > 0)
                om_sample(ctx, "cpu", counts[c], 100.0 * (res.user_ns + res.sys_ns) / res.wall_ns);
        }
    }
    unlink(audio);
    return rc;
}

/* ---- the table ------------------------------------------------------------------- */

#define RUN_PARAMS(s_def, s_quick, s_smoke, w_def)                                         \
    {"samples", OM_INT, s_def, s_quick, s_smoke, 1, 100000, NULL,                          \
     "timed runs in each repetition (process)"},                                          \
    {"warmup", OM_INT, w_def, NULL, "0", 0, 100, NULL, "untimed runs before the timed ones"}

#define PROCESS_METRICS                                                                   \
    {"wall", "ns", "lower", OM_POINT, NULL, "elapsed time from fork to exit"},             \
    {"user", "ns", "lower", OM_POINT, NULL, "user CPU time"},                              \
    {"system", "ns", "lower", OM_POINT, NULL, "system CPU time"},                          \
    {"max_rss", "bytes", "lower", OM_POINT, NULL, "peak resident memory"}

#define START(id, what, suites, fn, est_def, est_quick, est_smoke)                         \
    {id, "start-up time of " what, "CC06 T1 (start-up)", suites,                          \
     {est_def, est_quick, est_smoke}, fn,                                                 \
     {RUN_PARAMS("20", "5", "2", "2")}, {PROCESS_METRICS}}

const struct om_bench om_family_app[] = {
    START("app.start.sh", "/bin/sh running ':' (sh -c :)", "quick,full,cc06",
          run_start_sh, 0.096, 0.035, 0.018),
    START("app.start.bash", "bash running ':' (bash -c :)", "full,cc06",
          run_start_bash, 0.072, 0.036, 0.013),
    START("app.start.python3", "python3 -c pass", "quick,full,cc06",
          run_start_python3, 1.6, 0.48, 0.2),
    START("app.start.perl", "perl -e 1", "full,cc06", run_start_perl, 0.03, 0.013, 0.0065),
    START("app.start.vim", "Vim in Ex batch mode, quitting at once (vim -es -c qa!)",
          "full,cc06", run_start_vim, 0.08, 0.025, 0.013),
    {"app.vim_open", "Vim (Ex batch mode) opening a large generated text file and quitting",
     "CC06 T1", "quick,full,cc06", {5.1, 0.16, 0.025}, run_vim_open,
     {RUN_PARAMS("3", "2", "1", "1"),
      {"size", OM_INT, "470m", "16m", "1m", 1, 16LL << 30, NULL,
       "file size in bytes (k/m/g suffixes; the study's '470Mb', read as MiB)"}},
     {PROCESS_METRICS}},
    {"app.convert.jpeg_png", "ImageMagick converting a generated JPEG to PNG", "CC06 T3",
     "full,cc06", {46, 2.7, 0.088}, run_jpeg_png,
     {RUN_PARAMS("3", "2", "1", "1"),
      {"size", OM_INT, "4096", "1024", "128", 16, 16384, NULL,
       "side of the square image in pixels (the study's input is not stated)"}},
     {PROCESS_METRICS}},
    {"app.convert.avi_mpeg", "ffmpeg transcoding a generated AVI (MPEG-4 + PCM) to MPEG-1 "
     "program stream", "CC06 T3", "full,cc06", {6.5, 1.5, 0.57}, run_avi_mpeg,
     {RUN_PARAMS("3", "2", "1", "1"),
      {"seconds", OM_INT, "60", "4", "1", 1, 3600, NULL,
       "length of the generated video (the study's input is not stated)"}},
     {PROCESS_METRICS}},
    {"app.cpu.avi_play", "CPU share of decoding an AVI at its real-time pace (ffmpeg -re; "
     "the study played one in xine)", "CC06 T1 (app.cpu.xine_avi)", "full,cc06", {31, 5.9, 1.6},
     run_avi_play,
     {RUN_PARAMS("3", "1", "1", "0"),
      {"seconds", OM_INT, "10", "5", "1", 1, 3600, NULL,
       "length of the video played (the study's is not stated; 30 s until issue 21)"}},
     {{"cpu", "%", "lower", OM_POINT, NULL, "(user + system CPU time) / wall time"},
      PROCESS_METRICS}},
    {"app.cpu.audio_play", "CPU share of 1, 2, 4 audio players at once (real-time-paced "
     "ffmpeg decodes of an MP2 file; the study ran XMMS)", "CC06 T1 (app.cpu.xmms)",
     "full,cc06", {91, 16, 2.5}, run_audio_play,
     {RUN_PARAMS("3", "1", "1", "0"),
      {"instances", OM_LIST, "1,2,4", NULL, "1,2,4", 1, 64, NULL, "players at once"},
      {"seconds", OM_INT, "10", "5", "1", 1, 3600, NULL,
       "length of the audio played (the study's is not stated; 30 s until issue 21)"}},
     {{"cpu", "%", "lower", OM_SWEEP, "instances",
       "(user + system CPU time of all players) / wall time"}}},
    {0},
};
