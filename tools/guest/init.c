// SPDX-License-Identifier: GPL-2.0
/*
 * init: pid 1 of a kernel booted by tools/guest/uml-run (UML) or
 * tools/guest/qemu-run (x86_64 under QEMU).
 *
 * The root is a directory the script prepared on the host (hostfs on UML,
 * 9p on x86_64):
 *
 *   /init                 this program, static
 *   /prog                 the program to run, static
 *   /forklab/argv         its argv, each argument ending in '\0'
 *   /forklab/stdin        what it reads on stdin
 *   /forklab/config       if there is one, the kernel's config, uncompressed
 *                         (KCONFIG_PATH, which LTP reads)
 *   /dev/ubda, /dev/vda   if there is one, swap space (mkswap'ed)
 *   /forklab/gcov/        if there is one, where the guest's gcov data
 *                         (debugfs, CONFIG_GCOV_KERNEL) is copied at the end
 *   /forklab/console      if there is one (uml-run --shell): the program (a
 *                         shell) runs on the console's terminal instead of
 *                         the files around this line, and halt, poweroff
 *                         and reboot (busybox's: a signal to pid 1) end
 *                         the guest
 *   /forklab/stdout       written here: what it wrote on stdout,
 *   /forklab/stderr                     on stderr,
 *   /forklab/status                     and how it ended ("exit N",
 *                                       "signal N", or "init: ...")
 *
 * Mount proc, sysfs, debugfs, devtmpfs and a tmpfs on /tmp, swap to
 * the disk the script gave, run the program (none: /forklab/argv is empty,
 * a boot for the KUnit suites alone), hand its exit status to the host
 * through /proc/exitcode on UML (the linux process exits with it) and
 * power off: a clean power-off is what makes UML write its gcov data.
 * QEMU's qboot cannot power off; there init reboots, which with
 * -no-reboot ends QEMU.
 *
 * A kernel whose root's drivers are modules (Debian's binary kernels: 9p
 * and virtio are) boots with an initramfs of its own (tools/setup/binary-kernel)
 * holding this program as /init and the modules, in load order, listed in
 * /modules/order. There init loads them, mounts the root the command line
 * names (root=, rootfstype=, rootflags=, as the kernel would have) and
 * goes on from it as its /init.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define MAX_ARGS	256
#define ARGV_SIZE	65536

/* The status file, then /proc/exitcode: both say how the program ended. */
static void report(int code, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);

	f = fopen("/forklab/status", "w");
	if (f) {
		fprintf(f, "%s\n", line);
		fclose(f);
	}
	f = fopen("/proc/exitcode", "w");
	if (f) {
		fprintf(f, "%d\n", code);
		fclose(f);
	}
}

/* Write @cmd to kmemleak's debugfs file, if this kernel has kmemleak. */
static void kmemleak_write(const char *cmd)
{
	int fd = open("/sys/kernel/debug/kmemleak", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		dprintf(2, "init: kmemleak %s: %s\n", cmd, strerror(errno));
	close(fd);
}

/*
 * Put the final taint mask on the console for tools/judge/console-scan: kill
 * and reap whatever the program left running first, so that a complaint
 * at its exit (check_mm()'s "BUG: Bad rss-counter state") is printed,
 * and counted in the mask, before the line that closes the run.
 */
static void report_taint(void)
{
	char taint[32] = "unknown\n", line[64];
	int fd, len, settle_ms;

	kill(-1, SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	/*
	 * An mm can outlive its processes: an io_uring ring holds one and
	 * drops it from a workqueue after the ring's file is closed (an RCU
	 * grace period or two: tens of ms). Such work gets half a second, so
	 * that its check_mm() prints before the end:
	 * mm-tests/run.list puts forklab_settle_ms=500 on the command line
	 * of each program that uses io_uring, and the kernel hands an
	 * unknown parameter to init as an environment variable. Other
	 * programs' mms are dropped when their tasks are reaped; 100 ms is
	 * for anything the idle kernel still has queued.
	 */
	settle_ms = getenv("forklab_settle_ms") ? atoi(getenv("forklab_settle_ms")) : 100;
	usleep((settle_ms > 0 && settle_ms < 10000 ? settle_ms : 100) * 1000);
	/*
	 * A kmemleak kernel (make check SANITIZE=1): kmemleak reports an
	 * object only once it is older than 5 s and was seen unchanged by two
	 * scans; it prints "kmemleak: N new suspected memory leaks".
	 */
	if (access("/sys/kernel/debug/kmemleak", W_OK) == 0) {
		sleep(6);
		kmemleak_write("scan");
		kmemleak_write("scan");
	}
	fd = open("/proc/sys/kernel/tainted", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, taint, sizeof(taint) - 1);

		taint[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	/* One write() per record: /dev/kmsg refuses dprintf()'s lseek(). */
	len = snprintf(line, sizeof(line), "forklab: tainted %s", taint);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, line, len) != len)
			dprintf(2, "init: /dev/kmsg: %s\n", strerror(errno));
		close(fd);
	}
}

#define GCOV_DEBUGFS	"/sys/kernel/debug/gcov"
#define GCOV_OUT	"/forklab/gcov"

/* mkdir -p for the directories of @path, which is under GCOV_OUT. */
static void make_dirs(char *path)
{
	char *slash = path + strlen(GCOV_OUT);

	while ((slash = strchr(slash + 1, '/'))) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
}

/* One .gcda file of debugfs' gcov tree, copied under GCOV_OUT. */
static int copy_gcda(const char *path, const struct stat *st, int type,
		     struct FTW *ftw)
{
	static char buf[65536];
	char out[PATH_MAX];
	size_t len = strlen(path);
	ssize_t n;
	int in, fd;

	if (type != FTW_F || len < 5 || strcmp(path + len - 5, ".gcda"))
		return 0;
	snprintf(out, sizeof(out), GCOV_OUT "%s", path + strlen(GCOV_DEBUGFS));
	make_dirs(out);
	in = open(path, O_RDONLY);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while (in >= 0 && fd >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, n) != n)
			break;
	if (in < 0 || fd < 0)
		dprintf(2, "init: gcov %s: %s\n", path, strerror(errno));
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	return 0;
}

/*
 * x86_64 (CONFIG_GCOV_KERNEL): the counters live in the guest's memory;
 * copy them out for tools/judge/coverage. The .gcno links beside them are the
 * host build's own files.
 */
static void save_gcov(void)
{
	if (access(GCOV_OUT, W_OK) || access(GCOV_DEBUGFS, R_OK))
		return;
	if (nftw(GCOV_DEBUGFS, copy_gcda, 16, FTW_PHYS))
		dprintf(2, "init: walking " GCOV_DEBUGFS ": %s\n",
			strerror(errno));
}

static void power_off(void)
{
	report_taint();
	save_gcov();
	sync();
	/* UML has /proc/exitcode and powers off; qboot only halts. */
	reboot(access("/proc/exitcode", F_OK) ? RB_AUTOBOOT : RB_POWER_OFF);
	/* Only if reboot() failed: pid 1 exiting panics, which also ends UML. */
	_exit(1);
}

static void fail(const char *what)
{
	dprintf(2, "init: %s: %s\n", what, strerror(errno));
	report(125, "init: %s: %s", what, strerror(errno));
	power_off();
}

static void mount_or_fail(const char *type, const char *target)
{
	mkdir(target, 0755);
	if (mount(type, target, type, 0, NULL))
		fail(target);
}

/* A filesystem the kernel has (its mount point exists): mounted. */
static void mount_if_configured(const char *type, const char *target)
{
	if (access(target, F_OK) == 0)
		mount_or_fail(type, target);
}

static int read_argv(char **argv)
{
	static char buf[ARGV_SIZE];
	ssize_t len, pos = 0;
	int fd, argc = 0;

	fd = open("/forklab/argv", O_RDONLY);
	if (fd < 0)
		fail("/forklab/argv");
	while ((len = read(fd, buf + pos, sizeof(buf) - 1 - pos)) > 0)
		pos += len;
	close(fd);
	if (len < 0)
		fail("/forklab/argv");
	buf[pos] = '\0';
	for (len = 0; len < pos && argc < MAX_ARGS; len += strlen(buf + len) + 1)
		argv[argc++] = buf + len;
	argv[argc] = NULL;
	return argc;
}

static void redirect(const char *path, int flags, int to)
{
	int fd = open(path, flags, 0644);

	if (fd < 0 || dup2(fd, to) < 0)
		fail(path);
	close(fd);
}

#define CONSOLE_MODE	"/forklab/console"

/*
 * The console's terminal: the device /dev/console stands for, the last
 * name /sys/class/tty/console/active lists (ttyS0 on x86_64, tty0 on
 * UML); /dev/console if none.
 */
static void console_dev(char *dev, size_t size)
{
	char names[256] = "", *name;
	int fd = open("/sys/class/tty/console/active", O_RDONLY);
	ssize_t n;

	snprintf(dev, size, "/dev/console");
	if (fd < 0)
		return;
	n = read(fd, names, sizeof(names) - 1);
	names[n > 0 ? n : 0] = '\0';
	close(fd);
	names[strcspn(names, "\n")] = '\0';
	name = strrchr(names, ' ');
	name = name ? name + 1 : names;
	if (*name)
		snprintf(dev, size, "/dev/%s", name);
}

/*
 * The program's stdin, stdout and stderr on the console's terminal, its
 * controlling terminal (job control, ^C). /dev/console itself can be no
 * controlling terminal; it is the fallback.
 */
static void to_console(void)
{
	char dev[300];
	int fd;

	console_dev(dev, sizeof(dev));
	if (setsid() < 0)
		fail("setsid");
	fd = open(dev, O_RDWR);
	if (fd < 0)
		fd = open("/dev/console", O_RDWR);
	if (fd < 0)
		fail(dev);
	if (ioctl(fd, TIOCSCTTY, 0))
		dprintf(fd, "init: %s: no controlling terminal: %s\n", dev, strerror(errno));
	if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		fail(dev);
	if (fd > 2)
		close(fd);
}

/*
 * The shell gone (killed, if it still runs), a new line on its terminal,
 * after what it wrote (a prompt): the lines that close the run start a
 * line of their own on the console, where tools/judge/console-scan
 * reads them.
 */
static void end_console(pid_t pid)
{
	char dev[300];
	int fd;

	if (kill(pid, SIGKILL) == 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	console_dev(dev, sizeof(dev));
	fd = open(dev, O_WRONLY | O_NOCTTY);
	if (fd < 0)
		return;
	if (write(fd, "\n", 1) != 1)
		dprintf(2, "init: %s: %s\n", dev, strerror(errno));
	tcdrain(fd);
	close(fd);
}

/*
 * halt, poweroff, reboot: busybox sends SIGUSR1, SIGUSR2, SIGTERM to pid
 * 1. Caught, each ends init's wait() with EINTR; that is all it does.
 */
static void on_power_signal(int sig)
{
}

#define MODULE_ORDER	"/modules/order"
#define NEW_ROOT	"/root"

/* Kernel parameter @name's value on /proc/cmdline into @value, or "". */
static void cmdline_value(const char *name, char *value, size_t size)
{
	char line[4096];
	size_t len = strlen(name);
	char *word;
	FILE *f = fopen("/proc/cmdline", "r");

	value[0] = '\0';
	if (!f || !fgets(line, sizeof(line), f))
		fail("/proc/cmdline");
	fclose(f);
	for (word = strtok(line, "\n "); word; word = strtok(NULL, "\n "))
		if (!strncmp(word, name, len) && word[len] == '=')
			snprintf(value, size, "%s", word + len + 1);
}

/* Each module /modules/order lists, in its order; then the file goes. */
static void load_modules(void)
{
	char path[PATH_MAX];
	FILE *order = fopen(MODULE_ORDER, "r");

	if (!order)
		fail(MODULE_ORDER);
	while (fgets(path, sizeof(path), order)) {
		int fd;

		path[strcspn(path, "\n")] = '\0';
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) &&
			       errno != EEXIST))
			fail(path);
		close(fd);
		/* The initramfs is memory: what is loaded need not stay. */
		unlink(path);
	}
	fclose(order);
}

/*
 * The first stage, in the initramfs: the modules, then the root as the
 * kernel would have mounted it, and this program again from there. A
 * virtio device's driver may bind after its module's init returned: the
 * mount gets a few tries, 5 s in all.
 */
static void switch_to_root(void)
{
	char root[256], type[64], flags[1024];
	int tries = 50;

	mount_or_fail("proc", "/proc");
	mount_or_fail("devtmpfs", "/dev");
	load_modules();
	cmdline_value("root", root, sizeof(root));
	cmdline_value("rootfstype", type, sizeof(type));
	cmdline_value("rootflags", flags, sizeof(flags));
	mkdir(NEW_ROOT, 0755);
	while (mount(root, NEW_ROOT, type, 0, flags)) {
		if (--tries == 0)
			fail("mounting the root");
		usleep(100 * 1000);
	}
	if (umount("/proc") || umount("/dev") || chdir(NEW_ROOT) ||
	    mount(".", "/", NULL, MS_MOVE, NULL) || chroot(".") || chdir("/"))
		fail("switching to the root");
	execl("/init", "/init", NULL);
	fail("exec /init on the root");
}

int main(void)
{
	char *argv[MAX_ARGS + 1];
	int status, on_console;
	pid_t pid;

	if (access(MODULE_ORDER, R_OK) == 0)
		switch_to_root();
	mount_or_fail("proc", "/proc");
	mount_or_fail("sysfs", "/sys");
	mount_or_fail("debugfs", "/sys/kernel/debug");
	mount_or_fail("devtmpfs", "/dev");
	mount_or_fail("tmpfs", "/tmp");
	/*
	 * What udev adds to devtmpfs on a distribution: kselftest's runner
	 * appends its log to /dev/stdout, which would otherwise be a file.
	 */
	if (symlink("/proc/self/fd", "/dev/fd") ||
	    symlink("/proc/self/fd/0", "/dev/stdin") ||
	    symlink("/proc/self/fd/1", "/dev/stdout") ||
	    symlink("/proc/self/fd/2", "/dev/stderr"))
		fail("/dev/fd");
	/*
	 * Where the kernel has them, what the ecosystem's suites run in the
	 * guest expect mounted (LTP, kselftest: docs/targets.md).
	 */
	mount_if_configured("tracefs", "/sys/kernel/tracing");
	mount_if_configured("cgroup2", "/sys/fs/cgroup");
	/*
	 * Unless the command line set them: where LTP finds the kernel's
	 * config (/proc/config.gz takes a zcat this root has not), and the
	 * directory the suites make their files in.
	 */
	if (access("/forklab/config", R_OK) == 0)
		setenv("KCONFIG_PATH", "/forklab/config", 0);
	setenv("TMPDIR", "/tmp", 0);
	if (access("/dev/ubda", F_OK) == 0 && swapon("/dev/ubda", 0))
		fail("swapon /dev/ubda");
	if (access("/dev/vda", F_OK) == 0 && swapon("/dev/vda", 0))
		fail("swapon /dev/vda");
	/* kmemleak: what boot left unreferenced is not the program's. */
	kmemleak_write("clear");

	/* No program: the boot was for the KUnit suites (qemu-run --kunit). */
	if (read_argv(argv) < 1) {
		report(0, "exit 0");
		power_off();
	}

	on_console = access(CONSOLE_MODE, F_OK) == 0;
	if (on_console) {
		/* No SA_RESTART: the signal ends wait() below. */
		struct sigaction sa = { .sa_handler = on_power_signal };

		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		if (on_console) {
			to_console();
		} else {
			redirect("/forklab/stdin", O_RDONLY, 0);
			redirect("/forklab/stdout", O_WRONLY | O_CREAT | O_TRUNC, 1);
			redirect("/forklab/stderr", O_WRONLY | O_CREAT | O_TRUNC, 2);
		}
		if (chdir("/tmp"))
			_exit(125);
		execv("/prog", argv);
		dprintf(2, "init: exec %s: %s\n", argv[0], strerror(errno));
		_exit(126);
	}

	/* pid 1 reaps every orphan; the status that counts is the program's. */
	for (;;) {
		pid_t done = wait(&status);

		if (done == pid)
			break;
		/* poweroff in the shell: a guest ended as asked, status 0. */
		if (done < 0 && errno == EINTR && on_console) {
			end_console(pid);
			report(0, "exit 0");
			power_off();
		}
		if (done < 0 && errno != EINTR)
			fail("wait");
	}
	if (on_console)
		end_console(pid);
	if (WIFEXITED(status))
		report(WEXITSTATUS(status), "exit %d", WEXITSTATUS(status));
	else
		report(128 + WTERMSIG(status), "signal %d", WTERMSIG(status));
	power_off();
	return 0;
}
