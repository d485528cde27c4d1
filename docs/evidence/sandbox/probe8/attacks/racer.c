#define _GNU_SOURCE
/* The seventh probe's jobs-directory racer (run confined, inside a kernel child of the server).
   racer JOBS_DIR TARGET SECONDS LOG: watches JOBS_DIR (the server's kprof-kernels-* directory, which
   every confined kernel child of the server may write) for new job directories (kprof-*) and plants
   request.json -> TARGET in each at once; the server then writes the job's request with
   Path.write_text (follows links) unless it got there first. Logs each plant that won. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/inotify.h>
#include <fcntl.h>
#include <errno.h>

int main(int argc, char **argv) {
    if (argc < 5) return 2;
    const char *jobs = argv[1], *target = argv[2];
    int secs = atoi(argv[3]);
    FILE *log = fopen(argv[4], "a");
    int in = inotify_init1(IN_NONBLOCK);
    int dfd = open(jobs, O_PATH | O_DIRECTORY);
    if (in < 0 || dfd < 0 || inotify_add_watch(in, jobs, IN_CREATE | IN_ONLYDIR) < 0) {
        fprintf(log, "racer: cannot watch %s: %s\n", jobs, strerror(errno));
        return 1;
    }
    time_t end = time(NULL) + secs;
    long seen = 0, won = 0, lost = 0;
    char buf[8192] __attribute__((aligned(8)));
    char path[4096];
    while (time(NULL) < end) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n <= 0) continue; /* spin: no sleep between events */
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            if ((ev->mask & IN_ISDIR) && ev->len && strncmp(ev->name, "kprof-", 6) == 0) {
                seen++;
                snprintf(path, sizeof path, "%s/request.json", ev->name);
                if (symlinkat(target, dfd, path) == 0) {
                    won++;
                    fprintf(log, "racer: planted %s/%s -> %s\n", jobs, path, target);
                } else {
                    lost++;
                }
            }
            p += sizeof(struct inotify_event) + ev->len;
        }
    }
    fprintf(log, "racer: new job directories %ld, planted first %ld, too late %ld\n", seen, won, lost);
    fclose(log);
    return 0;
}
