/* outfile.c — output files written through a temporary file and a rename (outfile.h says why).
 * The temporary file's stream is an fopencookie stream over our own write loop, so the first
 * failed write's errno is kept (stdio forgets it) and reported by gt_outfile_commit. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_type_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* 0 when path is missing or a regular file: the only things a rename may replace. */
static int check_target(const char *path, const char *who)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "gputrace %s: cannot use %s: %s\n", who, path, strerror(errno));
        return -1;
    }
    if (S_ISREG(sb.st_mode))
        return 0;
    fprintf(stderr,
            "gputrace %s: %s is %s; gputrace replaces only regular files (give another -o, or "
            "-o - for standard output)\n",
            who, path, file_type_name(sb.st_mode));
    return -1;
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t len)
{
    gt_outfile *o = cookie;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(o->fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (!o->write_errno)
                o->write_errno = n < 0 ? errno : EIO;
            return 0; /* fopencookie: 0 is the error */
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static int cookie_close(void *cookie)
{
    gt_outfile *o = cookie;
    int rc = o->fd >= 0 ? close(o->fd) : 0;
    if (rc != 0 && !o->write_errno)
        o->write_errno = errno;
    o->fd = -1;
    return rc;
}

/* dir/.NAME.XXXXXX beside the target, so the rename stays in one file system. */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    if (strlen(base) > 200) /* NAME_MAX is 255: keep room for the dot and the suffix */
        base = "gputrace-output";
    size_t len = dirlen + strlen(base) + 16;
    char *tmpl = malloc(len);
    if (tmpl)
        snprintf(tmpl, len, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
    return tmpl;
}

int gt_outfile_open(gt_outfile *o, const char *path, const char *who)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = -1;
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    if (check_target(path, who) != 0)
        return -1;
    o->tmp = temp_template(path);
    if (!o->tmp) {
        fprintf(stderr, "gputrace %s: out of memory\n", who);
        return -1;
    }
    o->fd = mkostemp(o->tmp, O_CLOEXEC); /* O_CREAT|O_EXCL: never opens what is already there */
    if (o->fd < 0) {
        fprintf(stderr, "gputrace %s: cannot create %s: %s\n", who, path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    mode_t mask = umask(0); /* mkstemp makes 0600; the output gets what fopen would give it */
    umask(mask);
    if (fchmod(o->fd, 0666 & ~mask) != 0) {
        /* not fatal: the file stays readable by its owner */
    }
    static const cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
    o->f = fopencookie(o, "w", io);
    if (!o->f) {
        fprintf(stderr, "gputrace %s: cannot create %s: %s\n", who, path, strerror(errno));
        close(o->fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    return 0;
}

const char *gt_outfile_name(const gt_outfile *o)
{
    return o->tmp || strcmp(o->path, "-") ? o->path : "standard output";
}

static int finish_stdout(gt_outfile *o, const char *who)
{
    int err = fflush(stdout) != 0 ? errno : 0;
    if (!err && !ferror(stdout))
        return 0;
    fprintf(stderr, "gputrace %s: cannot write to standard output: %s\n", who,
            strerror(err ? err : EIO));
    o->f = NULL;
    return -1;
}

int gt_outfile_commit(gt_outfile *o, const char *who)
{
    if (!o->f)
        return -1;
    if (!o->tmp)
        return finish_stdout(o, who);
    int failed = fclose(o->f) != 0 || o->write_errno;
    o->f = NULL;
    if (failed) {
        int err = o->write_errno ? o->write_errno : EIO;
        fprintf(stderr, "gputrace %s: cannot write %s: %s (nothing written)\n", who, o->path,
                strerror(err));
        gt_outfile_discard(o);
        return -1;
    }
    /* What is at the target may have changed since open: check again, right before replacing. */
    if (check_target(o->path, who) != 0) {
        gt_outfile_discard(o);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "gputrace %s: cannot create %s: %s\n", who, o->path, strerror(errno));
        gt_outfile_discard(o);
        return -1;
    }
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}

void gt_outfile_discard(gt_outfile *o)
{
    if (o->f && o->tmp)
        fclose(o->f);
    else if (o->f)
        fflush(o->f);
    o->f = NULL;
    if (o->tmp) {
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
}

static struct sigaction saved_sigxfsz;
static int sigxfsz_saved;

void gt_ignore_sigxfsz(void)
{
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigxfsz_saved = sigaction(SIGXFSZ, &ign, &saved_sigxfsz) == 0;
}

void gt_restore_sigxfsz(void)
{
    if (sigxfsz_saved)
        sigaction(SIGXFSZ, &saved_sigxfsz, NULL);
}

int gt_stdout_finish(const char *who)
{
    gt_outfile o = {.f = stdout, .path = "-", .fd = -1};
    return finish_stdout(&o, who);
}
