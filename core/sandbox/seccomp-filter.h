/* seccomp-filter.h: the syscall filter of a sandboxed session (SPEC §8.4). */
#ifndef HQT_SECCOMP_FILTER_H
#define HQT_SECCOMP_FILTER_H

/* Flags of sandbox_seccomp_fd. */
#define SECCOMP_ALLOW_PTRACE (1u << 0) /* [sandbox] allow_ptrace: no ptrace rule */

/*
 * The filter as BPF in a sealed memfd at offset 0 (O_CLOEXEC): TIOCSTI,
 * TIOCLINUX, TIOCSETD, TIOCCONS and TIOCSCTTY stealing a terminal, the
 * kernel keyring, io_uring, mounts, namespaces, bpf, perf_event_open,
 * userfaultfd, process_vm_writev, pidfd_getfd, ptrace attach/seize (unless
 * SECCOMP_ALLOW_PTRACE), socket families but unix, inet, inet6 and netlink,
 * and netlink protocols but NETLINK_ROUTE are refused; other architectures
 * and x32 kill.  The fd, or -1 with *err.
 */
int sandbox_seccomp_fd(unsigned flags, char **err);

#endif
