/* no_vm_readv — preloaded before libgputrace.so to act as a container whose seccomp policy forbids
 * process_vm_readv: the checked first walk of Python frames must then use its pipe fallback. */
#include <errno.h>
#include <sys/types.h>
#include <sys/uio.h>

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
                         const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
    (void)pid, (void)local, (void)liovcnt, (void)remote, (void)riovcnt, (void)flags;
    errno = EPERM;
    return -1;
}
