/*
 * delayline: the lab's compiled delay line. It forwards IP packets between two TUN devices, one in
 * each lab namespace, with the same rule as the Python line (iscsi_report/lab/delayline.py):
 * each packet is serialised at link_mbps, first in first out per direction, and handed to the
 * other device one_way_delay_ms after its last bit left the serialiser. No qdisc is involved.
 *
 * Why a second implementation: to test whether the Python line's own work on each packet delayed
 * streams of small packets (8 KiB iSCSI segments) above 1 Gbit/s. It did not (BENCHMARKS.md, the
 * segments diagnosis on the compiled line); this line spends about a quarter less CPU per packet
 * and hands an idle packet over about 0.02 ms sooner. A packet costs one read, one copy, one write.
 *
 * Only a fixed delay is supported: a params file whose "jitter" object has any shape but "fixed"
 * is refused (exit status 2) rather than forwarded without it; jittered runs use the Python line.
 *
 * Usage: delayline --ns-b NAME [--dev lab0] [--params FILE] [--one-way-delay-ms X]
 *                  [--link-mbps Y] [--queue-bytes Z]
 * Started inside the first namespace; it creates --dev there, enters namespace --ns-b (by its
 * /run/netns file) and creates a second device of the same name. It prints "delayline: ready"
 * once both exist. SIGHUP re-reads --params (JSON with one_way_delay_ms, link_mbps,
 * queue_bytes); SIGTERM or SIGINT stop it, and it prints one JSON line of packet counters.
 *
 * Written for this project (Linux only).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
/* Largest packet read from a device: the path MTU (65000) with room to spare, as in the Python line. */
#define READ_BYTES (65536 + 64)
/* Below this wait, poll without sleeping: a timer wake-up is coarser than this. */
#define SPIN_NS 40000LL
/* Packets taken from one device before the other is served. */
#define BATCH_PACKETS 64
#define DEFAULT_QUEUE_BYTES (8 << 20)
#define PARAMS_MAX_BYTES (1 << 20)
#define TIMER_SLACK_NS 1

struct packet {
    int64_t due_ns;
    uint32_t len;
    unsigned char *data;
};

/* One direction of the link: a FIFO of packets with their delivery times. */
struct serialiser {
    double link_mbps;
    double one_way_delay_ms;
    int64_t queue_bytes;
    int64_t queued_bytes;
    int64_t free_at_ns;
    int64_t last_due_ns;
    uint64_t forwarded;
    uint64_t dropped;
    struct packet *ring;
    size_t cap, head, count;
};

struct params {
    double one_way_delay_ms;
    double link_mbps;
    int64_t queue_bytes;
};

static volatile sig_atomic_t stop_flag = 0;
static volatile sig_atomic_t reload_flag = 0;

static void on_stop(int sig) { (void)sig; stop_flag = 1; }
static void on_reload(int sig) { (void)sig; reload_flag = 1; }

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stdout, "delayline: error: %s: %s\n", what, strerror(errno));
    fflush(stdout);
    exit(1);
}

/* Serialisation time of size_bytes at the link rate, truncated to ns as the Python line does. */
static int64_t tx_ns(const struct serialiser *s, uint32_t size_bytes)
{
    if (s->link_mbps <= 0)
        return 0;
    return (int64_t)((double)size_bytes * 8.0 * 1000.0 / s->link_mbps);
}

static void ring_grow(struct serialiser *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    struct packet *ring = calloc(cap, sizeof *ring);
    if (!ring)
        die("calloc");
    for (size_t i = 0; i < s->count; i++)
        ring[i] = s->ring[(s->head + i) % s->cap];
    free(s->ring);
    s->ring = ring;
    s->cap = cap;
    s->head = 0;
}

/* Queue a packet that arrived at arrival_ns (or count a drop when the queue is full). */
static void push(struct serialiser *s, int64_t arrival_ns, const unsigned char *buf, uint32_t len)
{
    if (s->queued_bytes + len > s->queue_bytes) {
        s->dropped++;
        return;
    }
    int64_t start_ns = arrival_ns > s->free_at_ns ? arrival_ns : s->free_at_ns;
    s->free_at_ns = start_ns + tx_ns(s, len);
    int64_t due_ns = s->free_at_ns + (int64_t)(s->one_way_delay_ms * NS_PER_MS);
    if (due_ns < s->last_due_ns)
        due_ns = s->last_due_ns; /* never overtake the packet ahead (a lowered delay) */
    s->last_due_ns = due_ns;
    if (s->count == s->cap)
        ring_grow(s);
    unsigned char *copy = malloc(len);
    if (!copy)
        die("malloc");
    memcpy(copy, buf, len);
    s->ring[(s->head + s->count) % s->cap] = (struct packet){due_ns, len, copy};
    s->count++;
    s->queued_bytes += len;
}

/* Write every packet whose time has come to out_fd, in order. */
static void deliver_due(struct serialiser *s, int64_t now, int out_fd)
{
    while (s->count && s->ring[s->head].due_ns <= now) {
        struct packet p = s->ring[s->head];
        s->head = (s->head + 1) % s->cap;
        s->count--;
        s->queued_bytes -= p.len;
        s->forwarded++;
        if (write(out_fd, p.data, p.len) < 0) {
            if (errno != EIO && errno != EAGAIN && errno != EINVAL)
                die("write");
            s->dropped++; /* the device down for a moment, as the Python line counts it */
        }
        free(p.data);
    }
}

/* The number after "key": in a flat JSON text, or fallback when the key is absent. */
static double json_number(const char *text, const char *key, double fallback)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    const char *at = strstr(text, pattern);
    if (!at)
        return fallback;
    at = strchr(at + strlen(pattern), ':');
    if (!at)
        return fallback;
    char *end;
    double value = strtod(at + 1, &end);
    return end == at + 1 ? fallback : value;
}

/* Read the params file into p; exit 2 when it asks for a jitter this line does not draw. */
static void read_params(const char *path, struct params *p)
{
    if (!path)
        return;
    FILE *fh = fopen(path, "r");
    if (!fh)
        return; /* absent: keep the command-line values, as the Python line does */
    static char text[PARAMS_MAX_BYTES];
    size_t n = fread(text, 1, sizeof text - 1, fh);
    fclose(fh);
    text[n] = '\0';
    const char *jitter = strstr(text, "\"jitter\"");
    if (jitter) {
        const char *shape = strstr(jitter, "\"shape\"");
        const char *colon = shape ? strchr(shape + 7, ':') : NULL;
        const char *quote = colon ? strchr(colon, '"') : NULL;
        if (!quote || strncmp(quote, "\"fixed\"", 7) != 0) {
            fprintf(stdout, "delayline: error: %s asks for a jitter; the compiled line draws none "
                            "(use the Python line)\n", path);
            fflush(stdout);
            exit(2);
        }
    }
    p->one_way_delay_ms = json_number(text, "one_way_delay_ms", p->one_way_delay_ms);
    p->link_mbps = json_number(text, "link_mbps", p->link_mbps);
    p->queue_bytes = (int64_t)json_number(text, "queue_bytes", (double)p->queue_bytes);
}

static void apply_params(struct serialiser *s, const struct params *p)
{
    s->one_way_delay_ms = p->one_way_delay_ms;
    s->link_mbps = p->link_mbps;
    s->queue_bytes = p->queue_bytes;
}

static int open_tun(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        die("open /dev/net/tun");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0)
        die("TUNSETIFF");
    return fd;
}

static void enter_netns(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/run/netns/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(path);
    if (setns(fd, CLONE_NEWNET) != 0)
        die("setns");
    close(fd);
}

/* Read up to BATCH_PACKETS packets from in_fd into s, each stamped on arrival. */
static void take(int in_fd, struct serialiser *s, unsigned char *buf)
{
    for (int i = 0; i < BATCH_PACKETS; i++) {
        ssize_t n = read(in_fd, buf, READ_BYTES);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return;
            die("read");
        }
        push(s, now_ns(), buf, (uint32_t)n);
    }
}

static int64_t earliest_due(const struct serialiser *a, const struct serialiser *b)
{
    int64_t due = -1;
    if (a->count)
        due = a->ring[a->head].due_ns;
    if (b->count && (due < 0 || b->ring[b->head].due_ns < due))
        due = b->ring[b->head].due_ns;
    return due;
}

static const char *arg_value(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return fallback;
}

int main(int argc, char **argv)
{
    const char *ns_b = arg_value(argc, argv, "--ns-b", NULL);
    const char *dev = arg_value(argc, argv, "--dev", "lab0");
    const char *params_path = arg_value(argc, argv, "--params", NULL);
    if (!ns_b) {
        fprintf(stderr, "usage: delayline --ns-b NAME [--dev lab0] [--params FILE] "
                        "[--one-way-delay-ms X] [--link-mbps Y] [--queue-bytes Z]\n");
        return 2;
    }
    struct params p = {
        atof(arg_value(argc, argv, "--one-way-delay-ms", "0")),
        atof(arg_value(argc, argv, "--link-mbps", "1000")),
        atoll(arg_value(argc, argv, "--queue-bytes", "8388608")),
    };
    read_params(params_path, &p);
    prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);

    sigset_t blocked, during_poll;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    sigprocmask(SIG_BLOCK, &blocked, &during_poll); /* delivered only inside ppoll: no lost wake-up */
    struct sigaction stop_action = {.sa_handler = on_stop}, reload_action = {.sa_handler = on_reload};
    sigaction(SIGTERM, &stop_action, NULL);
    sigaction(SIGINT, &stop_action, NULL);
    sigaction(SIGHUP, &reload_action, NULL);

    int fd_a = open_tun(dev);
    enter_netns(ns_b);
    int fd_b = open_tun(dev);
    printf("delayline: ready\n");
    fflush(stdout);

    struct serialiser a_to_b = {0}, b_to_a = {0};
    apply_params(&a_to_b, &p);
    apply_params(&b_to_a, &p);
    static unsigned char buf[READ_BYTES];
    struct pollfd fds[2] = {{fd_a, POLLIN, 0}, {fd_b, POLLIN, 0}};
    while (!stop_flag) {
        if (reload_flag) {
            reload_flag = 0;
            read_params(params_path, &p);
            apply_params(&a_to_b, &p);
            apply_params(&b_to_a, &p);
            printf("delayline: one_way_delay_ms=%g link_mbps=%g queue_bytes=%lld jitter=fixed\n",
                   p.one_way_delay_ms, p.link_mbps, (long long)p.queue_bytes);
            fflush(stdout);
        }
        int64_t now = now_ns();
        deliver_due(&a_to_b, now, fd_b);
        deliver_due(&b_to_a, now, fd_a);
        int64_t due = earliest_due(&a_to_b, &b_to_a);
        struct timespec wait = {0, 0}, *timeout = NULL;
        if (due >= 0) {
            int64_t wait_ns = due - now_ns();
            wait_ns = wait_ns <= SPIN_NS ? 0 : wait_ns - SPIN_NS / 2;
            wait.tv_sec = wait_ns / NS_PER_S;
            wait.tv_nsec = wait_ns % NS_PER_S;
            timeout = &wait;
        }
        int ready = ppoll(fds, 2, timeout, &during_poll);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            die("ppoll");
        }
        if (fds[0].revents & POLLIN)
            take(fd_a, &a_to_b, buf);
        if (fds[1].revents & POLLIN)
            take(fd_b, &b_to_a, buf);
    }
    printf("delayline: {\"a_to_b_forwarded\": %llu, \"b_to_a_forwarded\": %llu, "
           "\"a_to_b_dropped\": %llu, \"b_to_a_dropped\": %llu}\n",
           (unsigned long long)a_to_b.forwarded, (unsigned long long)b_to_a.forwarded,
           (unsigned long long)a_to_b.dropped, (unsigned long long)b_to_a.dropped);
    fflush(stdout);
    return 0;
}
