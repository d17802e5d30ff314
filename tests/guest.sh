# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/guest.sh: the tests of tools/guest/: uml-run and qemu-run, booting the
# programs of tests/fixtures/uml/.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

# Bad input: one error line, exit 125 (not a status PROG could have), and
# nothing booted. --shell takes no PROG, and a terminal; --command no
# PROG, nor --shell; --copy no directory named as one the root has.
tk uml_run_rejects_bad_input
uml_run_rejects_bad_input() {
	static_fixture echo &&
	expect_exit 125 "$here/tools/guest/uml-run" && one_line_stderr &&
	expect_exit 125 "$here/tools/guest/uml-run" "$scratch/missing" && one_line_stderr &&
	expect_in 'no such file' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" /bin/true && one_line_stderr &&
	expect_in 'not a static executable' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --timeout 0 "$scratch/echo" &&
	one_line_stderr &&
	expect_exit 125 "$here/tools/guest/uml-run" --kernel "$scratch/none" "$scratch/echo" &&
	one_line_stderr && expect_in 'no um kernel' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --bogus "$scratch/echo" && one_line_stderr &&
	expect_exit 125 "$here/tools/guest/uml-run" --shell "$scratch/echo" && one_line_stderr &&
	expect_in 'runs a shell, not' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --shell < /dev/null && one_line_stderr &&
	expect_in 'needs a terminal' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --shell --command true < /dev/null &&
	one_line_stderr && expect_in 'give one of them' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --shell --gdb-x "$scratch/echo" < /dev/null &&
	one_line_stderr && expect_in '^guest/uml-run: error: --gdb and --shell both want the terminal' \
		"$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --command true "$scratch/echo" &&
	one_line_stderr && expect_in 'runs a command, not' "$scratch/stderr" &&
	mkdir -p "$scratch/bin" &&
	expect_exit 125 "$here/tools/guest/uml-run" --copy "$scratch/bin/" "$scratch/echo" &&
	one_line_stderr && expect_in 'its name is one the root has already' "$scratch/stderr"
}

# qemu-run (the same script, booting x86_64 under QEMU): the same refusals,
# and its own: a bad --mem, --gcov / (only UML writes its .gcda files
# itself, beside the objects), no x86_64 kernel, an accelerator that is
# neither kvm nor tcg (any file as the kernel: nothing boots). Its boots run in 'make check ARCH=x86_64'.
t qemu_run_rejects_bad_input
qemu_run_rejects_bad_input() {
	static_fixture echo &&
	expect_exit 125 "$here/tools/guest/qemu-run" && one_line_stderr &&
	expect_exit 125 "$here/tools/guest/qemu-run" /bin/true && one_line_stderr &&
	expect_in 'not a static executable' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/qemu-run" --mem lots "$scratch/echo" &&
	one_line_stderr && expect_in 'wants a size' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/qemu-run" --gcov / "$scratch/echo" &&
	one_line_stderr && expect_in 'only a UML guest' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/qemu-run" --kernel "$scratch/none" "$scratch/echo" &&
	one_line_stderr && expect_in 'no x86_64 kernel' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/qemu-run" --initrd "$scratch/none" "$scratch/echo" &&
	one_line_stderr && expect_in 'none: no such file' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/uml-run" --initrd "$scratch/echo" "$scratch/echo" &&
	one_line_stderr && expect_in 'boots no initramfs' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/qemu-run" --under kmv --kernel "$scratch/echo" "$scratch/echo" &&
	one_line_stderr && expect_in "accelerator 'kmv': want kvm or tcg" "$scratch/stderr"
}

# Debian's binary kernel (tools/setup/binary-kernel debian): downloaded,
# never installed, and booted by qemu-run with an initramfs whose init
# loads 9p and virtio from the package, then boots from the run's root.
# The program's arguments, stdin and status, the kernel's config (beside
# the image: it has no IKCONFIG) and the swap disk reach the guest. An
# initramfs whose modules do not load (out of order, one missing), a
# runner that drops --initrd, or a bad package that leaves a half-written
# directory fails here.
t debian_binary_kernel_boots_with_its_modules
debian_binary_kernel_boots_with_its_modules() {
	local out=$scratch/debian

	expect_exit 1 "$here/tools/setup/binary-kernel" --deb "$here/README.md" --out "$out" debian &&
	one_line_stderr && expect_in 'not a package' "$scratch/stderr" || return 1
	! compgen -G "$out*" > /dev/null || { fail "a bad --deb left $(ls -d "$out"*)"; return; }
	expect_exit 0 "$here/tools/setup/binary-kernel" --out "$out" debian &&
	expect_in '^linux-image-[0-9.]*-[0-9]*-amd64 [0-9]' "$scratch/stdout" &&
	static_fixture echo && static_fixture ecosystem &&
	expect_exit 7 "$here/tools/guest/qemu-run" --kernel "$out/vmlinuz" --initrd "$out/initrd.cpio" \
		--console "$scratch/console" "$scratch/echo" 7 "two words" <<< "from stdin" &&
	expect_in 'arg 2: two words' "$scratch/stdout" &&
	expect_in 'stdin: from stdin' "$scratch/stdout" &&
	expect_in 'Adding [0-9]*k swap on /dev/vda' "$scratch/console" &&
	expect_in '] forklab: tainted 0.$' "$scratch/console" &&
	expect_exit 1 "$here/tools/guest/qemu-run" --kernel "$out/vmlinuz" --initrd "$out/initrd.cpio" \
		"$scratch/ecosystem" < /dev/null &&
	expect_in "^ok KCONFIG_PATH, the kernel's config$" "$scratch/stdout" &&
	expect_in '^missing /proc/config.gz' "$scratch/stdout"
}

# A download that fails on package lists older than the mirror (a 404:
# the distribution's kernel updated since) reads the lists again and
# downloads once more; a download that fails again is one error line and
# leaves nothing. apt-get here is a stand-in (APT_GET) that fails until
# 'update', and talks as apt-get does (its progress on stdout, its errors
# on stderr); another package's .deb beside the download is not taken.
t binary_kernel_reads_the_package_lists_again
binary_kernel_reads_the_package_lists_again() {
	local bin=$scratch/apt-bin out=$scratch/binary-lists

	rm -rf "$bin" "$out"* "$scratch/apt-"* "$scratch/stand-in-deb" && mkdir -p "$bin" &&
	# The package served: a real one, with neither an image nor a
	# Depends: naming one.
	mkdir -p "$scratch/stand-in-deb/DEBIAN" &&
	printf '%s\n' 'Package: linux-image-amd64' 'Version: 2' 'Architecture: amd64' \
		'Maintainer: forklab <forklab@localhost>' 'Description: no image' \
		> "$scratch/stand-in-deb/DEBIAN/control" &&
	dpkg-deb --build "$scratch/stand-in-deb" "$scratch/apt-served.deb" > /dev/null &&
	cat > "$bin/apt-get" <<EOF || return 1
#!/bin/sh
case "\$1" in
update) touch "$scratch/apt-updated" ;;
download)
	[ -f "$scratch/apt-updated" ] && [ ! -f "$scratch/apt-broken" ] || {
		echo "E: Failed to fetch http://deb.debian.org/debian/pool/main/l/linux-signed-amd64/\${3}_1_amd64.deb  404  Not Found [IP: 192.0.2.1 80]" >&2
		exit 100; }
	echo "Get:1 http://deb.debian.org/debian bookworm/main amd64 \$3 amd64 2 [14 B]"
	if [ -f "$scratch/apt-garbage" ]; then
		echo 'not a package' > "\${3}_2_amd64.deb"
	else
		cp "$scratch/apt-served.deb" "\${3}_2_amd64.deb"
	fi
	echo 'not a package' > "zz-other_1_amd64.deb" ;;
esac
EOF
	chmod +x "$bin/apt-get" &&
	APT_GET=$bin/apt-get expect_exit 1 "$here/tools/setup/binary-kernel" --out "$out" debian &&
	[ -f "$scratch/apt-updated" ] || fail "a failed download did not read the package lists again" ||
		return 1
	# The second download's .deb was taken, and read: it names no image.
	one_line_stderr &&
	expect_in 'linux-image-amd64: neither an image nor a metapackage naming one' "$scratch/stderr" ||
		return 1
	# A download that is no package: dpkg-deb says so, in one line.
	touch "$scratch/apt-garbage" &&
	APT_GET=$bin/apt-get expect_exit 1 "$here/tools/setup/binary-kernel" --out "$out" debian &&
	one_line_stderr &&
	expect_in '/deb/linux-image-amd64_2_amd64.deb: not a package dpkg-deb can read' "$scratch/stderr" ||
		return 1
	touch "$scratch/apt-broken" &&
	APT_GET=$bin/apt-get expect_exit 1 "$here/tools/setup/binary-kernel" --out "$out" debian &&
	one_line_stderr && expect_in 'apt-get download .* failed: E: Failed to fetch .* 404 ' "$scratch/stderr" ||
		return 1
	! compgen -G "$out*" > /dev/null || fail "a failed download left $(ls -d "$out"*)"
}

# The program gets its arguments, its stdin and the command line; its
# stdout, stderr and exit status come back. A runner that dropped any of
# them, or always exited 0, fails here.
tk uml_run_passes_args_stdin_status
uml_run_passes_args_stdin_status() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture echo &&
	expect_exit 7 "$here/tools/guest/uml-run" --timeout 120 \
		--cmdline "forklab.marker=42" "$scratch/echo" 7 "two words" \
		<<< "from stdin" &&
	expect_in 'arg 1: 7' "$scratch/stdout" &&
	expect_in 'arg 2: two words' "$scratch/stdout" &&
	expect_in 'stdin: from stdin' "$scratch/stdout" &&
	expect_in 'cmdline: .*forklab.marker=42' "$scratch/stdout" &&
	expect_in 'to stderr' "$scratch/stderr" &&
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 "$scratch/echo" < /dev/null
}

# --command and --copy, as run/upstream-runners uses them: a shell
# command in the guest with the runner's stdin, each --copy DIR in the
# root as /NAME, the command's status the runner's. A runner that gives
# the command an empty stdin, keeps one --copy of two, or loses the
# status (the command's output goes through a pipe) fails here.
tk uml_run_runs_a_command
uml_run_runs_a_command() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	mkdir -p "$scratch/first-copy" "$scratch/second-copy"
	echo one > "$scratch/first-copy/a"
	echo two > "$scratch/second-copy/b"
	expect_exit 3 "$here/tools/guest/uml-run" --timeout 120 \
		--copy "$scratch/first-copy" --copy "$scratch/second-copy" \
		--command 'cat /first-copy/a /second-copy/b; read -r l; echo "stdin: $l"; exit 3' \
		<<< "from stdin"
	expect_in '^one$' "$scratch/stdout"
	expect_in '^two$' "$scratch/stdout"
	expect_in '^stdin: from stdin$' "$scratch/stdout"
}

# The guest gives what the ecosystem's suites read (docs/targets.md):
# the kernel's config in /proc/config.gz and, uncompressed, where
# KCONFIG_PATH says (LTP's tst_kconfig broke on its absence, then on the
# zcat the guest has not), a writable TMPDIR (selftests' mkstemp() failed without one),
# debugfs, pagemap, an argv[0] that opens (pagemap_ioctl reads itself).
# A guest or config that lost one fails here.
tk uml_guest_has_what_suites_read
uml_guest_has_what_suites_read() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture ecosystem &&
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 "$scratch/ecosystem" \
		< /dev/null &&
	expect_in '^ok /proc/config.gz (gzip)$' "$scratch/stdout" &&
	expect_in "^ok KCONFIG_PATH, the kernel's config$" "$scratch/stdout" &&
	expect_in '^ok a writable TMPDIR$' "$scratch/stdout" &&
	expect_in '^ok argv\[0\], a path to the program$' "$scratch/stdout"
}

# A hung program: UML is killed at the timeout, the message says so, the
# exit status is 124, and no UML process is left behind.
tk uml_run_kills_a_hang
uml_run_kills_a_hang() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	local kept left
	static_fixture hang &&
	expect_exit 124 "$here/tools/guest/uml-run" --timeout 5 --keep "$scratch/hang" &&
	expect_in 'hang: timed out after 5s; UML killed' "$scratch/stderr" || return 1
	kept=$(sed -n 's|^guest/uml-run: kept ||p' "$scratch/stderr")
	[ -d "$kept" ] || { fail "uml-run --keep did not say where the run was"; return; }
	echo "hostfs=$kept" > "$scratch/pattern"
	left=$(left_after "$scratch/pattern" 5)
	rm -rf "$kept"
	[ -z "$left" ] || fail "UML processes of $kept still run 5 s after: $left"
}

# left_after PATTERN_FILE SECONDS: the processes whose command line has
# the pattern (from a file: grep's own command line must not match it)
# when none is left, at once, or after SECONDS. grep's status is not
# read: a process that exits between the glob and grep's open of its
# cmdline makes grep exit 2, whatever it found.
left_after() {
	local i left

	for ((i = 0; i < $2 * 5; i++)); do
		left=$(grep -lasF -f "$1" /proc/[0-9]*/cmdline || :)
		[ -n "$left" ] || return 0
		sleep 0.2
	done
	echo "$left"
}

# guest_gate RUNNER: the console gate on a real kernel. A program that
# mounts a tmpfs with MS_MANDLOCK and exits 0 passes, though the console
# has the kernel's "WARNING: The mand mount option has been deprecated"
# (a pr_warn_once(), no WARN(), no taint); one that makes the kernel
# WARN_ON() (mm/gup.c, through CONFIG_GUP_TEST) and exits 0 fails, 125,
# naming __warn()'s line and the W taint. A runner or a console-scan that
# fails on every "WARNING:", or on none, fails here.
guest_gate() {
	static_fixture mount-mand && static_fixture warn-on &&
	expect_exit 0 "$1" "$scratch/mount-mand" < /dev/null &&
	expect_in '^mounted a tmpfs with MS_MANDLOCK$' "$scratch/stdout" &&
	expect_in "^the kernel's notice: WARNING: The mand mount option has been deprecated and$" \
		"$scratch/stdout" &&
	expect_exit 125 "$1" "$scratch/warn-on" < /dev/null &&
	expect_in '^get_user_pages() refused FOLL_LONGTERM$' "$scratch/stdout" &&
	expect_in 'warn-on: kernel complaint (exit 0); console:$' "$scratch/stderr" &&
	expect_in ': warning: WARNING: CPU: [0-9]* PID: [0-9]* at [^ ]*mm/gup.c:[0-9]* [a-z_]*+0x' \
		"$scratch/stderr" &&
	expect_in ': taint: tainted 512: W$' "$scratch/stderr"
}

tk uml_run_tells_a_notice_from_a_warning
uml_run_tells_a_notice_from_a_warning() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	guest_gate "$here/tools/guest/uml-run"
}

# x86_64_image: the x86_64 kernel's image in image (the caller's local),
# or the test skips (returns 1).
x86_64_image() {
	image=$("$here/tools/lib/target" x86_64 0 image)
	[ -f "$image" ] || skip "no x86_64 kernel yet ('make test ARCH=x86_64' builds it)"
}

# The same in the x86_64 guest, where the notice was first taken for a
# WARNING, when its kernel is built ('make check ARCH=x86_64' builds it;
# 'tests/run qemu_run_tells_a_notice_from_a_warning' then boots it twice).
tk qemu_run_tells_a_notice_from_a_warning
qemu_run_tells_a_notice_from_a_warning() {
	local image
	x86_64_image || return
	guest_gate "$here/tools/guest/qemu-run"
}

# kernel_banner IMAGE: "RELEASE #N", the release and build number its
# /proc/version shows: a bzImage's header (file), UML's linux_banner.
kernel_banner() {
	{
		file -bL "$1" | sed -n 's/.*, version \([^ ]*\) .* \(#[0-9][0-9]*\) .*/\1 \2/p'
		strings -a "$1" | sed -n 's/^Linux version \([^ ]*\) .* \(#[0-9][0-9]*\) .*/\1 \2/p'
	} | head -n 1
}

# pane_shows REGEX SECONDS: the tmux pane ($tmux) has a line matching
# REGEX within SECONDS; else fail, with what it showed.
pane_shows() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		! grep -q -- "$1" <<< "$("${tmux[@]}" capture-pane -p -J -S - 2> /dev/null)" || return 0
		sleep 0.2
	done
	fail "no '$1' on the terminal in $2 s: $(pane_tail)"
}

# pane_tail: the last lines the pane ($tmux) shows, and the runner's stderr.
pane_tail() {
	# (A session that has ended shows nothing: no status of its own.)
	"${tmux[@]}" capture-pane -p -J -S - 2> /dev/null | grep -v '^$' | tail -n 8 || true
	cat "$scratch/shell.err" 2> /dev/null || true
}

# pane_start LIMIT RUNNER ARG...: RUNNER ARG... in a detached tmux
# session of its own ($tmux; a server of its own), as a user at a
# terminal runs it: its stderr in shell.err, its exit status in shell.rc
# of the scratch directory. The session stays LIMIT s after the runner
# ends, for the pane to be read (guest_shell_end ends it).
pane_start() {
	local limit=$1

	shift
	rm -f "$scratch/shell.rc" "$scratch/shell.err"
	"${tmux[@]}" new-session -d -x 200 -y 50 "$(printf '%q ' env BUILD="$build" "$@")2> \
		$(printf '%q' "$scratch/shell.err"); echo \$? > $(printf '%q' "$scratch/shell.rc"); \
		sleep $limit"
}

# pane_exit LIMIT: the runner pane_start started has ended within LIMIT
# s; its exit status (else fail).
pane_exit() {
	local i

	for ((i = 0; i < $1 * 5; i++)); do
		[ ! -s "$scratch/shell.rc" ] || break
		sleep 0.2
	done
	[ -s "$scratch/shell.rc" ] || fail "the runner still runs $1 s after it was told to end: $(pane_tail)"
	cat "$scratch/shell.rc"
}

# guest_shell_end TMUX...: guest_shell's session ended, its run's
# directory removed.
guest_shell_end() {
	local kept

	"$@" kill-server 2> /dev/null || return 0
	sleep 1
	kept=$(sed -n 's|^guest/[a-z]*-run: kept ||p' "$scratch/shell.err" 2> /dev/null)
	[ -z "$kept" ] || rm -rf "$kept"
}

# guest_shell RUNNER IMAGE SECONDS: 'RUNNER --shell' in a detached tmux
# session (a server of its own), driven as a user at a terminal drives
# it: a prompt within SECONDS; a command whose answer only the guest
# gives (IMAGE's release and build number in /proc/version, the shell's
# arithmetic: forklab-42, which the typed line does not hold); poweroff;
# then the runner exited 0 within SECONDS and no process of its run is
# left. A runner that gave no terminal (no prompt, no echo of what was
# typed), ran the shell on the host, mounted no /proc, or hung at
# poweroff fails here.
guest_shell() {
	local runner=$1 image=$2 limit=$3 banner kept='' left rc
	local -a tmux=(tmux -S "$scratch/tmux.sock")
	command -v tmux > /dev/null || { skip "no tmux (make deps installs it)"; return; }
	banner=$(kernel_banner "$image")
	[ -n "$banner" ] || fail "no release and build number in $image"
	# Whatever stops the test, the session goes (SIGHUP ends the
	# runner), and the run's directory.
	trap 'guest_shell_end "${tmux[@]}"' EXIT
	pane_start "$limit" "$runner" --shell --keep --timeout $((limit * 4))
	pane_shows '^forklab-[a-z0-9_]*:/tmp# $' "$limit"
	"${tmux[@]}" send-keys 'cat /proc/version; echo forklab-$((6*7))' Enter
	pane_shows '^forklab-42$' 30
	# The shell's next prompt: it reads again.
	pane_shows '^forklab-[a-z0-9_]*:/tmp# $' 30
	"${tmux[@]}" capture-pane -p -J -S - | sed -n '/# cat \/proc\/version; echo forklab-\$((6\*7))$/,$p' \
		> "$scratch/pane"
	expect_in "^Linux version ${banner% *} .* ${banner#* } " "$scratch/pane"
	expect_in '^forklab-42$' "$scratch/pane"
	"${tmux[@]}" send-keys 'poweroff' Enter
	rc=$(pane_exit "$limit")
	[ "$rc" = 0 ] || fail "exit $rc after poweroff, want 0: $(cat "$scratch/shell.err")"
	kept=$(sed -n 's|^guest/[a-z]*-run: kept ||p' "$scratch/shell.err")
	[ -d "$kept" ] || fail "no run directory kept: $(cat "$scratch/shell.err")"
	echo "$kept" > "$scratch/pattern"
	rm -rf "$kept"
	left=$(left_after "$scratch/pattern" 5)
	[ -z "$left" ] || fail "processes of the run still there 5 s after it ended: $left"
}

tk uml_run_gives_a_shell
uml_run_gives_a_shell() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	guest_shell "$here/tools/guest/uml-run" "$kernel" 30
}

# The same in the x86_64 guest, when its kernel is built.
tk qemu_run_gives_a_shell
qemu_run_gives_a_shell() {
	local image
	x86_64_image || return
	guest_shell "$here/tools/guest/qemu-run" "$image" 90
}

# --gdb-x: gdb on the run's kernel, the guest stopped at its start.
# fork-shared-rw.gdb breaks in copy_page_range() for the one vma
# fork-shared-rw.c maps at 0x10000000 (read-write, MAP_SHARED) and prints
# its bounds and flags from struct vm_area_struct, then lets the guest
# finish. A runner that lets the guest run before gdb's commands (the
# fork over, nothing to break in), hands gdb symbols that are not the
# booted kernel's (KASLR's offset, another build), or a kernel whose
# debug info lacks the structure types (CONFIG_DEBUG_INFO_REDUCED) fails
# here; so does one that loses the program's output or status, or passes
# a run whose gdb commands failed (the second run: its last command does).
guest_gdb() {
	local runner=$1 image=$2 limit=$3 flags

	command -v gdb > /dev/null || { skip "no gdb (make deps installs it)"; return; }
	static_fixture fork-shared-rw
	expect_exit 0 "$runner" --kernel "$image" --timeout "$limit" \
		--gdb-x "$fixtures/uml/fork-shared-rw.gdb" "$scratch/fork-shared-rw"
	expect_in '^forklab-gdb: vma 0x10000000-0x10001000 vm_flags 0x[0-9a-f]*$' "$scratch/stdout"
	flags=$(sed -n 's/^forklab-gdb: vma .* vm_flags //p' "$scratch/stdout")
	# VM_READ, VM_WRITE, VM_SHARED, VM_MAYWRITE, VM_MAYSHARE.
	[ $((flags & 0xab)) = $((0xab)) ] ||
		fail "vm_flags $flags of a MAP_SHARED read-write vma lack VM_READ|VM_WRITE|VM_SHARED|VM_MAYWRITE|VM_MAYSHARE (0xab)"
	expect_in '^#1 .* in dup_mmap ' "$scratch/stdout"
	expect_in '^forked with a shared page at 0x10000000$' "$scratch/stdout"
	printf '%s\n' continue 'print forklab_no_such_symbol' > "$scratch/bad.gdb"
	expect_exit 125 "$runner" --kernel "$image" --timeout "$limit" \
		--gdb-x "$scratch/bad.gdb" "$scratch/fork-shared-rw"
	expect_in 'gdb exited 1' "$scratch/stderr"
}

tk uml_run_breaks_in_copy_page_range
uml_run_breaks_in_copy_page_range() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	guest_gdb "$here/tools/guest/uml-run" "$kernel" 180
}

# The same on QEMU's gdb stub, when the x86_64 kernel is built.
tk qemu_run_breaks_in_copy_page_range
qemu_run_breaks_in_copy_page_range() {
	local image
	x86_64_image || return
	guest_gdb "$here/tools/guest/qemu-run" "$image" 300
}

# --gdb: gdb's own prompt on the user's terminal (a tmux session, as
# guest_shell drives --shell), the guest stopped at its start: a
# breakpoint in copy_page_range() for fork-shared-rw's vma is hit on
# 'continue' and its end printed, 'detach' lets the guest finish, and
# after 'quit' the runner prints the program's output and exits with its
# status. A runner that gives gdb no terminal, lets the guest run before
# the prompt (the fork over), or loses the program once gdb quits fails
# here.
guest_gdb_at_a_terminal() {
	local runner=$1 image=$2 limit=$3 rc
	local -a tmux=(tmux -S "$scratch/tmux.sock")

	command -v gdb > /dev/null || { skip "no gdb (make deps installs it)"; return; }
	command -v tmux > /dev/null || { skip "no tmux (make deps installs it)"; return; }
	static_fixture fork-shared-rw
	trap 'guest_shell_end "${tmux[@]}"' EXIT
	pane_start "$limit" "$runner" --kernel "$image" --timeout $((limit * 4)) --gdb \
		"$scratch/fork-shared-rw"
	pane_shows '^(gdb) $' "$limit"
	"${tmux[@]}" send-keys 'break copy_page_range if src_vma->vm_start == 0x10000000' Enter
	pane_shows '^Breakpoint 1 at ' 30
	"${tmux[@]}" send-keys 'continue' Enter
	pane_shows 'Breakpoint 1, copy_page_range (' "$limit"
	"${tmux[@]}" send-keys 'printf "forklab-gdb-end %#lx\n", src_vma->vm_end' Enter
	pane_shows '^forklab-gdb-end 0x10001000$' 30
	"${tmux[@]}" send-keys 'detach' Enter
	pane_shows '^\[Inferior 1 (.*) detached\]$' 30
	"${tmux[@]}" send-keys 'quit' Enter
	pane_shows '^forked with a shared page at 0x10000000$' "$limit"
	rc=$(pane_exit "$limit")
	[ "$rc" = 0 ] || fail "exit $rc after quit, want 0: $(pane_tail)"
}

tk uml_run_gdb_at_a_terminal
uml_run_gdb_at_a_terminal() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	guest_gdb_at_a_terminal "$here/tools/guest/uml-run" "$kernel" 180
}

tk qemu_run_gdb_at_a_terminal
qemu_run_gdb_at_a_terminal() {
	local image
	x86_64_image || return
	guest_gdb_at_a_terminal "$here/tools/guest/qemu-run" "$image" 300
}

# accel_choose (tools/lib/forklab.sh), which qemu-run, run/kunit and
# run/mm-tests ask whether QEMU runs under KVM: a device that opens but
# is no KVM device (/dev/null) and one that does not exist each give TCG,
# its reason printed once, by the first that asks (the answer is kept
# for the machine, per device: a new one is tried again); UML has none.
# A probe that trusts any device that opens, or a cache that forgets the
# device, fails here. No kernel: neither reaches the probe boot.
t accel_falls_back_to_tcg
accel_falls_back_to_tcg() {
	local kept=$scratch/accel-build

	rm -rf "$kept"
	: > "$scratch/accel.err"
	# accel_of DEVICE [TARGET]: the accelerator chosen and the
	# emulator's words, on one line; chosen as the tools choose it, in
	# a bash of its own under set -euo pipefail (here, in a list, a
	# failed command would not end it).
	accel_of() {
		BUILD=$kept KVM_DEVICE=$1 bash -c 'set -euo pipefail
			. "$1/tools/lib/forklab.sh"; prog=tests/accel
			target "$2" 0
			accel_choose "$3"
			echo "${target_accel:-none} ${target_emulator_args[*]}"' \
			tests/accel "$here" "${2:-x86_64}" "$scratch/no-kernel" 2>> "$scratch/accel.err"
	}
	[[ "$(accel_of /dev/null)" = 'tcg '*tcg* ]] || fail "/dev/null: $(accel_of /dev/null)" || return 1
	[[ "$(accel_of /dev/null)" != *'{accel}'* ]] || fail "{accel} left in the words" || return 1
	expect_in '^tests/accel: QEMU runs under tcg: /dev/null opens but is no KVM device' "$scratch/accel.err" &&
	[ "$(wc -l < "$scratch/accel.err")" = 1 ] || fail "want the reason once: $(cat "$scratch/accel.err")" ||
		return 1
	[[ "$(accel_of "$scratch/no-device")" = 'tcg '* ]] || fail "no device: not tcg" || return 1
	expect_in "^tests/accel: QEMU runs under tcg: $scratch/no-device: no such device" "$scratch/accel.err" &&
	[ "$(wc -l < "$scratch/accel.err")" = 2 ] || fail "want two reasons: $(cat "$scratch/accel.err")" ||
		return 1
	[ "$(accel_of /dev/null um)" = 'none ' ] || fail "UML has an accelerator: $(accel_of /dev/null um)"
}

# qemu-run itself under the stand-in: the guest runs (under TCG), the
# reason is printed by the first boot only.
tk qemu_run_under_tcg_when_kvm_is_not_there
qemu_run_under_tcg_when_kvm_is_not_there() {
	local image
	x86_64_image || return
	static_fixture echo &&
	BUILD=$scratch/accel-qemu KVM_DEVICE=/dev/null expect_exit 0 "$here/tools/guest/qemu-run" \
		--kernel "$image" "$scratch/echo" hello &&
	expect_in '^arg 1: hello$' "$scratch/stdout" &&
	expect_in '^guest/qemu-run: QEMU runs under tcg: /dev/null opens but is no KVM device' "$scratch/stderr" &&
	BUILD=$scratch/accel-qemu KVM_DEVICE=/dev/null expect_exit 0 "$here/tools/guest/qemu-run" \
		--kernel "$image" "$scratch/echo" hello || return 1
	! grep -q 'runs under' "$scratch/stderr" || fail "the reason printed again: $(cat "$scratch/stderr")"
}
