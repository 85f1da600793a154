/*
 * slowdisk: a FUSE file system with one file, disk.img, whose reads and writes behave like a
 * single-server disk: a fixed time per request plus the bytes at a capped rate.
 *
 * The file's bytes live in a backing file (on /dev/shm in the lab). Each read or write request
 * takes one mutex (the single server), notes its service start on CLOCK_MONOTONIC, moves the
 * bytes with pread/pwrite, then sleeps until the absolute deadline
 *     start + per_request_us + bytes / rate
 * before it releases the mutex and replies. Copying the bytes therefore happens inside the
 * service time, not after it; concurrent requests wait on the mutex, so the throughput of all
 * of them together is at most the rate. (The kernel itself serialises O_DIRECT writes to one
 * FUSE file by its inode lock; reads arrive in parallel and queue on the mutex.) Files are opened in FUSE direct_io mode (no page
 * cache), and max_write is raised to MAX_REQUEST_BYTES, so one write of up to that size is one
 * request; the kernel cuts larger ones into pieces of that size, each paying per_request_us.
 *
 * Usage: slowdisk --backing=PATH [--per-request-us=N] [--rate-mib-s=N] [FUSE options] MOUNTDIR
 * (rate 0 = no rate cap). On unmount it prints one JSON line of request counts to stderr.
 *
 * Written for this project against libfuse 3's high-level API (FUSE_USE_VERSION 31).
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The one file's name, as a path below the mount point. */
#define DISK_PATH "/disk.img"
/* Largest read or write the kernel hands over in one request: 1 MiB (256 pages, the kernel's
 * default fs.fuse.max_pages_limit). */
#define MAX_REQUEST_BYTES (1u << 20)
#define NS_PER_S 1000000000LL
#define NS_PER_US 1000LL
#define BYTES_PER_MIB (1024.0 * 1024.0)
/* Timer slack of the daemon's threads (inherited by FUSE's workers): 1 ns instead of the
 * default 50 us, so a deadline is kept to the wake-up latency. */
#define TIMER_SLACK_NS 1

struct options {
	const char *backing;
	unsigned long per_request_us;
	double rate_mib_s;
};

struct counters {
	uint64_t reads, writes, read_bytes, write_bytes, max_read_bytes, max_write_bytes;
};

static struct options opts = { NULL, 0, 0.0 };
static int backing_fd = -1;
static pthread_mutex_t server = PTHREAD_MUTEX_INITIALIZER;
static struct counters counts;

#define OPTION(spec, field) { spec, offsetof(struct options, field), 1 }
static const struct fuse_opt option_spec[] = {
	OPTION("--backing=%s", backing),
	OPTION("--per-request-us=%lu", per_request_us),
	OPTION("--rate-mib-s=%lf", rate_mib_s),
	FUSE_OPT_END
};

/* Nanoseconds one request of `bytes` occupies the server. */
static int64_t service_ns(size_t bytes)
{
	int64_t ns = (int64_t)opts.per_request_us * NS_PER_US;
	if (opts.rate_mib_s > 0)
		ns += (int64_t)((double)bytes * NS_PER_S / (opts.rate_mib_s * BYTES_PER_MIB));
	return ns;
}

/* `t` moved on by `ns` nanoseconds. */
static struct timespec add_ns(struct timespec t, int64_t ns)
{
	int64_t total = (int64_t)t.tv_nsec + ns;
	t.tv_sec += total / NS_PER_S;
	t.tv_nsec = total % NS_PER_S;
	return t;
}

/* Sleep until the absolute CLOCK_MONOTONIC time `until`, resuming after signals. */
static void sleep_until(const struct timespec *until)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, until, NULL) == EINTR)
		;
}

/* One request through the single server: the I/O, then the wait out to its service time. */
static ssize_t serve(int is_write, char *buf, size_t size, off_t offset)
{
	struct timespec start, deadline;
	ssize_t done;

	pthread_mutex_lock(&server);
	clock_gettime(CLOCK_MONOTONIC, &start);
	done = is_write ? pwrite(backing_fd, buf, size, offset) : pread(backing_fd, buf, size, offset);
	if (done < 0)
		done = -errno;
	deadline = add_ns(start, service_ns(size));
	sleep_until(&deadline);
	if (is_write) {
		counts.writes++;
		counts.write_bytes += size;
		if (size > counts.max_write_bytes)
			counts.max_write_bytes = size;
	} else {
		counts.reads++;
		counts.read_bytes += size;
		if (size > counts.max_read_bytes)
			counts.max_read_bytes = size;
	}
	pthread_mutex_unlock(&server);
	return done;
}

static void *sd_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_write = MAX_REQUEST_BYTES;
	cfg->direct_io = 1;
	cfg->use_ino = 0;
	return NULL;
}

static void sd_destroy(void *private_data)
{
	(void)private_data;
	fprintf(stderr,
		"{\"reads\": %llu, \"writes\": %llu, \"read_bytes\": %llu, \"write_bytes\": %llu, "
		"\"max_read_bytes\": %llu, \"max_write_bytes\": %llu}\n",
		(unsigned long long)counts.reads, (unsigned long long)counts.writes,
		(unsigned long long)counts.read_bytes, (unsigned long long)counts.write_bytes,
		(unsigned long long)counts.max_read_bytes, (unsigned long long)counts.max_write_bytes);
	fflush(stderr);
}

static int sd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct stat backing;
	(void)fi;

	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, DISK_PATH) != 0)
		return -ENOENT;
	if (fstat(backing_fd, &backing) != 0)
		return -errno;
	st->st_mode = S_IFREG | 0644;
	st->st_nlink = 1;
	st->st_uid = backing.st_uid;
	st->st_gid = backing.st_gid;
	st->st_size = backing.st_size;
	st->st_blocks = backing.st_blocks;
	st->st_blksize = 4096;
	st->st_atim = backing.st_atim;
	st->st_mtim = backing.st_mtim;
	st->st_ctim = backing.st_ctim;
	return 0;
}

static int sd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)offset;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, DISK_PATH + 1, NULL, 0, 0);
	return 0;
}

static int sd_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, DISK_PATH) != 0)
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int sd_read(const char *path, char *buf, size_t size, off_t offset,
		   struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return (int)serve(0, buf, size, offset);
}

static int sd_write(const char *path, const char *buf, size_t size, off_t offset,
		    struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return (int)serve(1, (char *)buf, size, offset);
}

static int sd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, DISK_PATH) != 0)
		return -ENOENT;
	return ftruncate(backing_fd, size) == 0 ? 0 : -errno;
}

/* fsync/fdatasync: passed to the backing file, with no service time (a cache flush of a RAM
 * file; the device's time is all in its reads and writes). */
static int sd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return (datasync ? fdatasync(backing_fd) : fsync(backing_fd)) == 0 ? 0 : -errno;
}

static int sd_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static int sd_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static const struct fuse_operations slowdisk_ops = {
	.init = sd_init,
	.destroy = sd_destroy,
	.getattr = sd_getattr,
	.readdir = sd_readdir,
	.open = sd_open,
	.read = sd_read,
	.write = sd_write,
	.truncate = sd_truncate,
	.fsync = sd_fsync,
	.flush = sd_flush,
	.release = sd_release,
};

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	int status;

	if (fuse_opt_parse(&args, &opts, option_spec, NULL) == -1)
		return 2;
	if (opts.backing == NULL || opts.rate_mib_s < 0) {
		fprintf(stderr, "usage: slowdisk --backing=PATH [--per-request-us=N] "
				"[--rate-mib-s=N] [FUSE options] MOUNTDIR\n");
		return 2;
	}
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS);
	backing_fd = open(opts.backing, O_RDWR);
	if (backing_fd < 0) {
		fprintf(stderr, "slowdisk: cannot open %s: %s\n", opts.backing, strerror(errno));
		return 1;
	}
	status = fuse_main(args.argc, args.argv, &slowdisk_ops, NULL);
	close(backing_fd);
	fuse_opt_free_args(&args);
	return status;
}
