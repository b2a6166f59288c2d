/* SPDX-License-Identifier: MIT */
/*
 * glibc_compat.c - what the agent takes from glibc above GLIBC_2.17, made of
 * what glibc 2.17 already had.
 *
 * The release agents (clusterdoc-agent, clusterdoc-agent-aarch64) are linked
 * against link-time stubs of libc (scripts/glibc-stubs.py, docs/architecture.md
 * "The agent's glibc floor") that bind every import to its newest version at or
 * below GLIBC_2.17. An import that has no such version needs a definition here,
 * which the link resolves inside the agent; the stub generator stops the build,
 * naming the symbol, when one is missing. This file is linked only into those
 * agents: the head, the tests and the sanitizer builds use glibc's own.
 *
 * It also supplies the start-up the executable's constructors rely on: the
 * crt1.o of glibc >= 2.34 passes init = NULL to __libc_start_main, which a
 * glibc < 2.34 takes to mean "nothing to run", so the agent's .init_array
 * (libgcc's and any constructor of ours or of the static libraries) would be
 * skipped there. The agent is linked with --wrap=__libc_start_main, and the
 * wrapper passes an init function that does what glibc's __libc_csu_init did
 * before 2.34. Every glibc, old and new, runs a non-NULL init as the only
 * initializer of the executable (the legacy path every pre-2.34 program takes),
 * so the constructors run exactly once everywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * stat, lstat, fstat and fstatat became functions of libc.so.6 in glibc 2.33.
 * Before, <sys/stat.h> turned them into calls of __xstat & co. with the
 * version of struct stat the program was compiled for; these are still in
 * every glibc. On x86_64 and aarch64 struct stat has not changed since.
 */
#if defined(__x86_64__)
#define COMPAT_STAT_VER 1 /* _STAT_VER_LINUX */
#elif defined(__aarch64__)
#define COMPAT_STAT_VER 0 /* _STAT_VER_KERNEL, the generic Linux layout */
#else
#error "compat/glibc_compat.c: the struct stat version of this architecture is not known"
#endif

int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);

int stat(const char *path, struct stat *st)
{
	return __xstat(COMPAT_STAT_VER, path, st);
}

int lstat(const char *path, struct stat *st)
{
	return __lxstat(COMPAT_STAT_VER, path, st);
}

int fstat(int fd, struct stat *st)
{
	return __fxstat(COMPAT_STAT_VER, fd, st);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return __fxstatat(COMPAT_STAT_VER, dirfd, path, st, flags);
}

/*
 * getrandom (glibc 2.25): the system call itself, which Linux has had since
 * 3.17; on an older kernel (ENOSYS) /dev/urandom gives the same bytes.
 */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	long r = syscall(SYS_getrandom, buf, len, flags);

	if (r >= 0 || errno != ENOSYS)
		return r;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return got;
}

/*
 * strerrorname_np (glibc 2.32): the symbolic name of an errno value, or NULL.
 * The table is built from <errno.h> itself, so the numbers are the target's.
 */
#define ERRNO_NAME(e) [e] = #e
static const char *const errno_names[] = {
    ERRNO_NAME(EPERM),
    ERRNO_NAME(ENOENT),
    ERRNO_NAME(ESRCH),
    ERRNO_NAME(EINTR),
    ERRNO_NAME(EIO),
    ERRNO_NAME(ENXIO),
    ERRNO_NAME(E2BIG),
    ERRNO_NAME(ENOEXEC),
    ERRNO_NAME(EBADF),
    ERRNO_NAME(ECHILD),
    ERRNO_NAME(EAGAIN),
    ERRNO_NAME(ENOMEM),
    ERRNO_NAME(EACCES),
    ERRNO_NAME(EFAULT),
    ERRNO_NAME(ENOTBLK),
    ERRNO_NAME(EBUSY),
    ERRNO_NAME(EEXIST),
    ERRNO_NAME(EXDEV),
    ERRNO_NAME(ENODEV),
    ERRNO_NAME(ENOTDIR),
    ERRNO_NAME(EISDIR),
    ERRNO_NAME(EINVAL),
    ERRNO_NAME(ENFILE),
    ERRNO_NAME(EMFILE),
    ERRNO_NAME(ENOTTY),
    ERRNO_NAME(ETXTBSY),
    ERRNO_NAME(EFBIG),
    ERRNO_NAME(ENOSPC),
    ERRNO_NAME(ESPIPE),
    ERRNO_NAME(EROFS),
    ERRNO_NAME(EMLINK),
    ERRNO_NAME(EPIPE),
    ERRNO_NAME(EDOM),
    ERRNO_NAME(ERANGE),
    ERRNO_NAME(EDEADLK),
    ERRNO_NAME(ENAMETOOLONG),
    ERRNO_NAME(ENOLCK),
    ERRNO_NAME(ENOSYS),
    ERRNO_NAME(ENOTEMPTY),
    ERRNO_NAME(ELOOP),
    ERRNO_NAME(ENOMSG),
    ERRNO_NAME(EIDRM),
    ERRNO_NAME(ECHRNG),
    ERRNO_NAME(EL2NSYNC),
    ERRNO_NAME(EL3HLT),
    ERRNO_NAME(EL3RST),
    ERRNO_NAME(ELNRNG),
    ERRNO_NAME(EUNATCH),
    ERRNO_NAME(ENOCSI),
    ERRNO_NAME(EL2HLT),
    ERRNO_NAME(EBADE),
    ERRNO_NAME(EBADR),
    ERRNO_NAME(EXFULL),
    ERRNO_NAME(ENOANO),
    ERRNO_NAME(EBADRQC),
    ERRNO_NAME(EBADSLT),
    ERRNO_NAME(EBFONT),
    ERRNO_NAME(ENOSTR),
    ERRNO_NAME(ENODATA),
    ERRNO_NAME(ETIME),
    ERRNO_NAME(ENOSR),
    ERRNO_NAME(ENONET),
    ERRNO_NAME(ENOPKG),
    ERRNO_NAME(EREMOTE),
    ERRNO_NAME(ENOLINK),
    ERRNO_NAME(EADV),
    ERRNO_NAME(ESRMNT),
    ERRNO_NAME(ECOMM),
    ERRNO_NAME(EPROTO),
    ERRNO_NAME(EMULTIHOP),
    ERRNO_NAME(EDOTDOT),
    ERRNO_NAME(EBADMSG),
    ERRNO_NAME(EOVERFLOW),
    ERRNO_NAME(ENOTUNIQ),
    ERRNO_NAME(EBADFD),
    ERRNO_NAME(EREMCHG),
    ERRNO_NAME(ELIBACC),
    ERRNO_NAME(ELIBBAD),
    ERRNO_NAME(ELIBSCN),
    ERRNO_NAME(ELIBMAX),
    ERRNO_NAME(ELIBEXEC),
    ERRNO_NAME(EILSEQ),
    ERRNO_NAME(ERESTART),
    ERRNO_NAME(ESTRPIPE),
    ERRNO_NAME(EUSERS),
    ERRNO_NAME(ENOTSOCK),
    ERRNO_NAME(EDESTADDRREQ),
    ERRNO_NAME(EMSGSIZE),
    ERRNO_NAME(EPROTOTYPE),
    ERRNO_NAME(ENOPROTOOPT),
    ERRNO_NAME(EPROTONOSUPPORT),
    ERRNO_NAME(ESOCKTNOSUPPORT),
    ERRNO_NAME(EOPNOTSUPP),
    ERRNO_NAME(EPFNOSUPPORT),
    ERRNO_NAME(EAFNOSUPPORT),
    ERRNO_NAME(EADDRINUSE),
    ERRNO_NAME(EADDRNOTAVAIL),
    ERRNO_NAME(ENETDOWN),
    ERRNO_NAME(ENETUNREACH),
    ERRNO_NAME(ENETRESET),
    ERRNO_NAME(ECONNABORTED),
    ERRNO_NAME(ECONNRESET),
    ERRNO_NAME(ENOBUFS),
    ERRNO_NAME(EISCONN),
    ERRNO_NAME(ENOTCONN),
    ERRNO_NAME(ESHUTDOWN),
    ERRNO_NAME(ETOOMANYREFS),
    ERRNO_NAME(ETIMEDOUT),
    ERRNO_NAME(ECONNREFUSED),
    ERRNO_NAME(EHOSTDOWN),
    ERRNO_NAME(EHOSTUNREACH),
    ERRNO_NAME(EALREADY),
    ERRNO_NAME(EINPROGRESS),
    ERRNO_NAME(ESTALE),
    ERRNO_NAME(EUCLEAN),
    ERRNO_NAME(ENOTNAM),
    ERRNO_NAME(ENAVAIL),
    ERRNO_NAME(EISNAM),
    ERRNO_NAME(EREMOTEIO),
    ERRNO_NAME(EDQUOT),
    ERRNO_NAME(ENOMEDIUM),
    ERRNO_NAME(EMEDIUMTYPE),
    ERRNO_NAME(ECANCELED),
    ERRNO_NAME(ENOKEY),
    ERRNO_NAME(EKEYEXPIRED),
    ERRNO_NAME(EKEYREVOKED),
    ERRNO_NAME(EKEYREJECTED),
    ERRNO_NAME(EOWNERDEAD),
    ERRNO_NAME(ENOTRECOVERABLE),
    ERRNO_NAME(ERFKILL),
    ERRNO_NAME(EHWPOISON),
};

const char *strerrorname_np(int e)
{
	if (e < 0 || (size_t)e >= sizeof(errno_names) / sizeof(errno_names[0]))
		return NULL;
	return errno_names[e];
}

/* The executable's start-up, as glibc's __libc_csu_init ran it before 2.34. */
typedef int (*compat_main_fn)(int argc, char **argv, char **envp);

int __real___libc_start_main(compat_main_fn main_fn, int argc, char **argv, compat_main_fn init,
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end);
int __wrap___libc_start_main(compat_main_fn main_fn, int argc, char **argv, compat_main_fn init,
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* From crti.o (_init) and the linker script (the bounds of .init_array). */
extern void _init(void);
extern void (*__init_array_start[])(int, char **, char **) __attribute__((visibility("hidden")));
extern void (*__init_array_end[])(int, char **, char **) __attribute__((visibility("hidden")));

static int compat_run_init(int argc, char **argv, char **envp)
{
	_init();
	size_t n = (size_t)(__init_array_end - __init_array_start);
	for (size_t i = 0; i < n; i++)
		__init_array_start[i](argc, argv, envp);
	return 0;
}

int __wrap___libc_start_main(compat_main_fn main_fn, int argc, char **argv, compat_main_fn init,
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	return __real___libc_start_main(main_fn, argc, argv, init ? init : compat_run_init, fini,
	                                rtld_fini, stack_end);
}
