/* The ping parser's fast path compiled: one pass over the text, one line at a time.
 *
 * It takes exactly the lines the numpy scanner in ping.py takes (its reference, kept beside
 * it and compared with it by the tests), and returns the same columns:
 *
 *     [TS] N bytes from SRC: icmp_seq=N ttl=N time=F ms[ (DUP!)]
 *
 * with ", " for ": ", " seq=" for " icmp_seq=", " hlim=" for " ttl=" or no ttl at all; TS,
 * N, F at most as long as the numpy scanner's 8-byte words allow. Every read stays inside
 * the line it checks (the line's bounds are passed to every helper), so no input can make it
 * read outside the text, whatever its bytes. Values are computed with the same double
 * arithmetic as the numpy scanner (an integer mantissa divided by a power of ten taken from
 * the caller's table), so they are equal to the bit.
 *
 * Built by scripts/build_pingscan.py into a shared library named by this file's CRC-32;
 * loaded with ctypes. Without the library the numpy scanner runs instead.
 */
#include <stdint.h>
#include <string.h>

#define WORD_BYTES 8          /* the numpy scanner's token width: at most 8 bytes */
#define MIN_REPLY_BYTES 31    /* len("1 bytes from a: seq=1 time=1 ms") */
#define TIMESTAMP_WIDTH 24    /* "[1595037214.261953]": digits and dots read after '[' */
#define MAX_MANTISSA_DIGITS 18
#define EXACT_MANTISSA_LIMIT (UINT64_C(1) << 53)
#define SOURCE_BYTES 16       /* a source is compared in its first 16 bytes */
#define ABI_VERSION 1

/* What the scan found; the caller reads these after the call. */
typedef struct {
    int64_t replies;       /* taken reply lines written */
    int64_t todo;          /* other non-empty lines (written up to todo_capacity) */
    int64_t others;        /* taken replies whose source may differ from the first's */
    int64_t short_seq_key; /* some taken reply said " seq=" */
    int64_t first_source_start; /* -1 when no reply was taken */
    int64_t first_source_length;
} pingscan_counts;

/* A taken reply's columns (arrays of the caller's, capacity elements each). */
typedef struct {
    int64_t *line;
    int64_t *seq;
    double *rtt_ms;
    double *unit_ms;
    double *timestamp_s;
    uint8_t *duplicate;
    int64_t capacity;
} pingscan_replies;

typedef struct {
    int64_t seq;
    double rtt_ms;
    double unit_ms;
    double timestamp_s;
    int duplicate;
    int short_key;
    int64_t source_start;
    int64_t source_length;
} reply;

int pingscan_abi(void) { return ABI_VERSION; }

static int is_digit(uint8_t c) { return (uint8_t)(c - '0') < 10; }

/* Whether text[pos:pos+len] lies in [lo, hi) and equals lit. */
static int has(const uint8_t *t, int64_t lo, int64_t hi, int64_t pos, const char *lit, int64_t len) {
    return pos >= lo && pos + len <= hi && memcmp(t + pos, lit, (size_t)len) == 0;
}

/* Value of the all-digit token t[a:b] of 1..8 bytes; -1 when it is not one. */
static int64_t integer(const uint8_t *t, int64_t a, int64_t b) {
    int64_t len = b - a, value = 0;
    if (len < 1 || len > WORD_BYTES) return -1;
    for (int64_t i = a; i < b; i++) {
        if (!is_digit(t[i])) return -1;
        value = value * 10 + (t[i] - '0');
    }
    return value;
}

/* The token [0-9]+(.[0-9]+)? in t[a:b] of 1..8 bytes: 1 and its value and unit, else 0. */
static int decimal(const uint8_t *t, int64_t a, int64_t b, const double *pow10, double *value, double *unit) {
    int64_t len = b - a, dot = -1;
    uint64_t mantissa = 0;
    if (len < 1 || len > WORD_BYTES) return 0;
    for (int64_t i = a; i < b; i++) {
        if (t[i] == '.') {
            if (dot >= 0) return 0;
            dot = i;
        } else if (is_digit(t[i])) {
            mantissa = mantissa * 10 + (uint64_t)(t[i] - '0');
        } else {
            return 0;
        }
    }
    if (dot == a || dot == b - 1) return 0; /* digits on both sides of a dot */
    double scale = pow10[dot < 0 ? 0 : b - 1 - dot];
    *value = (double)mantissa / scale;
    *unit = 1.0 / scale;
    return 1;
}

/* ping -D's "[TS] " at the line start: 1 and the timestamp and the body's start, else 0. */
static int stamp(const uint8_t *t, int64_t s, int64_t e, const double *pow10, double *ts, int64_t *body) {
    int64_t pos = s + 1, length = 0, dots = 0, fraction = 0;
    uint64_t mantissa = 0;
    int active = 1;
    for (int64_t j = 0; j < TIMESTAMP_WIDTH && active; j++) {
        uint8_t c = pos + j < e ? t[pos + j] : '\n';
        if (is_digit(c)) {
            mantissa = mantissa * 10 + (uint64_t)(c - '0');
            fraction += dots > 0;
        } else if (c == '.') {
            dots++;
        } else {
            active = 0;
            break;
        }
        length++;
    }
    if (active || length == 0) return 0; /* no token, or one longer than the width */
    if (dots > 1 || (dots == 1 && fraction == 0)) return 0;
    if (length - dots > MAX_MANTISSA_DIGITS || length - dots <= fraction) return 0;
    if (mantissa >= EXACT_MANTISSA_LIMIT) return 0;
    int64_t after = pos + length;
    if (!has(t, s, e, after, "] ", 2)) return 0;
    *ts = (double)mantissa / pow10[fraction];
    *body = after + 2;
    return 1;
}

/* Whether the line t[s:e] is a reply the fast path takes; its fields in r when it is. */
static int take(const uint8_t *t, int64_t s, int64_t e, const double *pow10, reply *r) {
    int64_t eq[3], n_eq = 0;
    if (e - s < MIN_REPLY_BYTES) return 0;
    for (const uint8_t *p = t + s; (p = memchr(p, '=', (size_t)(t + e - p))) != NULL; p++) {
        if (n_eq == 3) return 0;
        eq[n_eq++] = p - t;
    }
    if (n_eq < 2) return 0;
    int64_t time_eq = eq[n_eq - 1], mid_eq = eq[n_eq - 2], seq_eq = eq[0];
    int64_t rtt_end;
    if (has(t, s, e, e - 3, " ms", 3)) {
        r->duplicate = 0;
        rtt_end = e - 3;
    } else if (has(t, s, e, e - 10, " ms (DUP!)", 10)) {
        r->duplicate = 1;
        rtt_end = e - 10;
    } else {
        return 0;
    }
    if (!decimal(t, time_eq + 1, rtt_end, pow10, &r->rtt_ms, &r->unit_ms)) return 0;
    if (!has(t, s, e, time_eq - 5, " time=", 6)) return 0;
    int64_t time_key = time_eq - 5, seq_end = time_key;
    if (n_eq == 3) { /* " ttl=N" or " hlim=N" between the seq and the time */
        if (integer(t, mid_eq + 1, time_key) < 0) return 0;
        if (has(t, s, e, mid_eq - 4, " ttl=", 5)) seq_end = mid_eq - 4;
        else if (has(t, s, e, mid_eq - 5, " hlim=", 6)) seq_end = mid_eq - 5;
        else return 0;
    }
    if ((r->seq = integer(t, seq_eq + 1, seq_end)) < 0) return 0;
    int64_t separator;
    if (has(t, s, e, seq_eq - 9, " icmp_seq=", 10)) {
        separator = seq_eq - 10;
        r->short_key = 0;
    } else if (has(t, s, e, seq_eq - 4, " seq=", 5)) {
        separator = seq_eq - 5;
        r->short_key = 1;
    } else {
        return 0;
    }
    if (separator < s || (t[separator] != ':' && t[separator] != ',')) return 0;
    int64_t body = s;
    r->timestamp_s = __builtin_nan("");
    if (t[s] == '[' && !stamp(t, s, e, pow10, &r->timestamp_s, &body)) return 0;
    int64_t count = 0; /* the byte count: 1 to 7 digits, as the numpy scanner's word allows */
    while (count < WORD_BYTES && body + count < e && is_digit(t[body + count])) count++;
    if (count < 1 || count == WORD_BYTES) return 0;
    int64_t source = body + count + 12;
    if (!has(t, s, e, body + count, " bytes from ", 12) || source >= separator) return 0;
    r->source_start = source;
    r->source_length = separator - source;
    return 1;
}

/* Whether a taken reply's source may differ from the first's (a long one always may, the first
 * reply's own included). */
static int other_source(const uint8_t *t, int64_t n, const reply *r, int64_t first, int64_t first_length) {
    if (r->source_length != first_length || r->source_length > SOURCE_BYTES) return 1;
    if (r->source_start + SOURCE_BYTES > n || first + SOURCE_BYTES > n) return 1;
    return memcmp(t + r->source_start, t + first, SOURCE_BYTES) != 0;
}

/* Scan text[0:n]: taken replies into out; the other non-empty lines into todo as rows (line
 * index, start, end, previous line's start, its end); the taken replies whose source may
 * differ from the first's into others as rows (start, end). Rows beyond a capacity are counted,
 * not written: the caller calls again with room for counts->todo and counts->others rows.
 * Returns 0, or -1 when out has no room for a reply (the caller sizes it so that it always has).
 */
int pingscan(const uint8_t *t, int64_t n, const double *pow10, pingscan_replies *out, int64_t *todo,
             int64_t todo_capacity, int64_t *others, int64_t others_capacity, pingscan_counts *counts) {
    memset(counts, 0, sizeof *counts);
    counts->first_source_start = -1;
    int64_t s = 0, index = 0, prev_s = 0, prev_e = 0;
    while (s < n || (s == n && n > 0 && t[n - 1] == '\n')) {
        const uint8_t *nl = memchr(t + s, '\n', (size_t)(n - s));
        int64_t e = nl ? nl - t : n;
        reply r;
        if (take(t, s, e, pow10, &r)) {
            int64_t k = counts->replies;
            if (k >= out->capacity) return -1;
            out->line[k] = index;
            out->seq[k] = r.seq;
            out->rtt_ms[k] = r.rtt_ms;
            out->unit_ms[k] = r.unit_ms;
            out->timestamp_s[k] = r.timestamp_s;
            out->duplicate[k] = (uint8_t)r.duplicate;
            counts->replies = k + 1;
            counts->short_seq_key |= r.short_key;
            if (counts->first_source_start < 0) {
                counts->first_source_start = r.source_start;
                counts->first_source_length = r.source_length;
            }
            if (other_source(t, n, &r, counts->first_source_start, counts->first_source_length)) {
                if (counts->others < others_capacity) {
                    others[2 * counts->others] = s;
                    others[2 * counts->others + 1] = e;
                }
                counts->others++;
            }
        } else if (e > s) {
            if (counts->todo < todo_capacity) {
                int64_t *row = todo + 5 * counts->todo;
                row[0] = index, row[1] = s, row[2] = e, row[3] = prev_s, row[4] = prev_e;
            }
            counts->todo++;
        }
        prev_s = s, prev_e = e;
        index++;
        if (!nl) break;
        s = e + 1;
    }
    return 0;
}
