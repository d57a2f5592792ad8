/* seccomp.c: the syscall filter every sandboxed session runs under (SPEC §8.4),
 * built with libseccomp and handed to bwrap as BPF through a sealed memfd. */
#include "seccomp-filter.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* clone's flags are its first argument everywhere but s390. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

struct rule {
	const char *name;
	int nr;
	int err;
};

#define RULE(sys, e) { #sys, SCMP_SYS(sys), e }

/* Refused outright.  clone3 gets ENOSYS so libc falls back to clone, whose
 * flags the filter can see (clone3 passes them in memory). */
static const struct rule refused[] = {
	RULE(keyctl, EPERM), RULE(add_key, EPERM), RULE(request_key, EPERM),
	RULE(io_uring_setup, EPERM), RULE(io_uring_enter, EPERM),
	RULE(io_uring_register, EPERM),
	RULE(mount, EPERM), RULE(umount2, EPERM), RULE(pivot_root, EPERM),
	RULE(move_mount, EPERM), RULE(open_tree, EPERM), RULE(fsopen, EPERM),
	RULE(fsconfig, EPERM), RULE(fsmount, EPERM), RULE(fspick, EPERM),
	RULE(mount_setattr, EPERM),
	RULE(unshare, EPERM), RULE(setns, EPERM),
	RULE(clone3, ENOSYS),
	RULE(bpf, EPERM), RULE(perf_event_open, EPERM), RULE(userfaultfd, EPERM),
	/* Reaching into another process: the sandbox's own init among them. */
	RULE(process_vm_writev, EPERM), RULE(pidfd_getfd, EPERM),
};

/*
 * ptrace attach and seize: the agent could trace bwrap's init (pid 1
 * inside) and undo its parent-death signal.  PTRACE_TRACEME stays (a
 * debugger's own child asks for it), as do the requests on a tracee it
 * has.  [sandbox] allow_ptrace lifts this.
 */
static const unsigned long ptrace_attach[] = { PTRACE_ATTACH, PTRACE_SEIZE };

/* New namespaces through clone: the user namespace is the one that matters
 * (--disable-userns covers it too); the others would need privileges we
 * dropped, so refusing them costs nothing.  CLONE_NEWTIME shares its bit
 * with the exit signal in clone's flags and is left alone. */
static const unsigned long clone_ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS,
	CLONE_NEWIPC, CLONE_NEWCGROUP,
};

static int
add_rules(scmp_filter_ctx ctx, unsigned flags, char **err)
{
	int r;

	for (size_t i = 0; !(flags & SECCOMP_ALLOW_PTRACE) && i < ARRAY_SIZE(ptrace_attach); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ptrace), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, ptrace_attach[i]));
		if (r < 0) {
			set_err(err, "seccomp: cannot add a rule for ptrace: %s", strerror(-r));
			return -1;
		}
	}

	/*
	 * The pane's terminal is the host's pty: no typing into it (TIOCSTI,
	 * TIOCLINUX), no other line discipline on it (TIOCSETD: with
	 * dev.tty.ldisc_autoload = 1 asking for one loads its kernel module),
	 * no console output sent to a terminal (TIOCCONS), and no terminal
	 * stolen from the session that holds it (TIOCSCTTY with 1).  The last
	 * two need CAP_SYS_ADMIN in the first user namespace, which a session
	 * never has; the filter refuses them even so.  A pty of the sandbox's
	 * own still becomes a controlling terminal (TIOCSCTTY with 0).  The
	 * kernel reads the request and TIOCSCTTY's argument as ints: compare
	 * only the low 32 bits, so a request with high bits set is refused too.
	 */
	static const unsigned long ttyreqs[] = { TIOCSTI, TIOCLINUX, TIOCSETD, TIOCCONS };
	for (size_t i = 0; i < ARRAY_SIZE(ttyreqs); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ttyreqs[i]));
		if (r < 0)
			goto fail_ioctl;
	}
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 2,
			     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSCTTY),
			     SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, 1));
	if (r < 0)
		goto fail_ioctl;

	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(refused[i].err), refused[i].nr, 0);
		if (r < 0) {
			set_err(err, "seccomp: cannot add a rule for %s: %s",
				refused[i].name, strerror(-r));
			return -1;
		}
	}

	for (size_t i = 0; i < ARRAY_SIZE(clone_ns_flags); i++) {
		unsigned long f = clone_ns_flags[i];
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     SCMP_CMP(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, f, f));
		if (r < 0) {
			set_err(err, "seccomp: cannot add a rule for clone: %s", strerror(-r));
			return -1;
		}
	}

	/*
	 * socket(): unix, inet, inet6 and netlink only (of netlink, one
	 * protocol: below).  libseccomp cannot AND two comparisons of one
	 * argument, so refuse every other family below AF_NETLINK one by one
	 * and everything above it in one rule (a value with high bits set is
	 * above it too, and refused).
	 */
	for (int fam = 0; fam < AF_NETLINK; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam, 0));
		if (r < 0)
			goto fail_socket;
	}
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
			     SCMP_A0(SCMP_CMP_GT, (scmp_datum_t)AF_NETLINK, 0));
	if (r < 0)
		goto fail_socket;

	/*
	 * Netlink: NETLINK_ROUTE alone, which glibc's getifaddrs and
	 * getaddrinfo's AI_ADDRCONFIG use (node's os.networkInterfaces()
	 * through libuv).  The others tell the sandbox about the host (with
	 * the network on, NETLINK_SOCK_DIAG lists every socket's name, the
	 * tmux server's among them; KOBJECT_UEVENT its device events).  All 64
	 * bits are compared: a protocol with high bits set is refused too,
	 * even where the kernel would read NETLINK_ROUTE in it.  EAFNOSUPPORT
	 * as for the other families, not EPERM: it is what a kernel without
	 * the family gives (EPROTONOSUPPORT without the protocol), and what
	 * libaudit's callers (pam_faillock, hwclock, systemd) take as "no
	 * audit in this kernel" and go on; EPERM is an error to them
	 * (pam_faillock refuses, hwclock exits).
	 */
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 2,
			     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_NETLINK, 0),
			     SCMP_A2(SCMP_CMP_NE, (scmp_datum_t)NETLINK_ROUTE, 0));
	if (r < 0)
		goto fail_socket;
	return 0;

fail_ioctl:
	set_err(err, "seccomp: cannot add a rule for ioctl: %s", strerror(-r));
	return -1;
fail_socket:
	set_err(err, "seccomp: cannot add a rule for socket: %s", strerror(-r));
	return -1;
}

int
sandbox_seccomp_fd(unsigned flags, char **err)
{
	scmp_filter_ctx ctx;
	int fd, r;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL) {
		set_err(err, "seccomp: cannot create a filter");
		return -1;
	}
	/*
	 * Only the native architecture is in the filter; a syscall from any
	 * other (i386 through int 0x80) kills the process, and libseccomp's
	 * x86_64 filter sends x32 numbers (bit 0x40000000) there too.
	 */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0) {
		set_err(err, "seccomp: cannot set the bad-architecture action: %s",
			strerror(-r));
		seccomp_release(ctx);
		return -1;
	}
	if (add_rules(ctx, flags, err) < 0) {
		seccomp_release(ctx);
		return -1;
	}

	fd = memfd_create("hqt-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		set_err(err, "seccomp: memfd_create: %s", strerror(errno));
		seccomp_release(ctx);
		return -1;
	}
	r = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (r < 0) {
		set_err(err, "seccomp: cannot export the filter: %s", strerror(-r));
		close(fd);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		set_err(err, "seccomp: cannot seal the filter: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
