# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/setup.sh: the tests of tools/setup/: prepare-tree on a stand-in kernel tree
# (tests/fixtures/tree) and stand-in patch series.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

prepare() {
	BUILD=$scratch/build FORKLAB_PATCHES=${PATCHES:-$fixtures/patches-ok} \
		FORKLAB_KUNIT=${KUNIT:-$fixtures/kunit} "$here/tools/setup/prepare-tree" "$@"
}

# A fresh copy of the stand-in kernel tree, as a user's tree.
user_tree() {
	rm -rf "$scratch/user" "$scratch/build"
	cp -a "$fixtures/tree" "$scratch/user"
}

t prepare_tree_rejects_non_kernel_source
prepare_tree_rejects_non_kernel_source() {
	user_tree
	KERNEL_SRC=/tmp expect_exit 1 prepare &&
	one_line_stderr && expect_in 'KERNEL_SRC=/tmp is not a Linux source tree' "$scratch/stderr" &&
	[ ! -e "$scratch/build/src/linux" ] || fail "left a tree behind"
}

# Patches applied, kunit/ wired in; a second run does nothing and says so.
t prepare_tree_is_idempotent
prepare_tree_is_idempotent() {
	user_tree
	KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in 'ready: Linux 6.12.117, 1 patches' "$scratch/stdout" &&
	grep -q '^VISIBLE_IF_KUNIT bool$' "$scratch/build/src/linux/mm/memory.c" ||
		fail "patch not applied"
	grep -q 'source "mm/forklab/Kconfig"' "$scratch/build/src/linux/mm/Kconfig" &&
	grep -q 'obj-y += forklab/' "$scratch/build/src/linux/mm/Makefile" &&
	[ -f "$scratch/build/src/linux/mm/forklab/fixture_test.c" ] ||
		fail "kunit/ not wired into mm/"
	KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in 'is up to date' "$scratch/stdout"
}

# Run from a parent make (as 'make -C clone check' does): the version must
# still read 6.12.117, not make's "Entering directory" chatter.
t prepare_tree_under_parent_make
prepare_tree_under_parent_make() {
	user_tree
	printf 'all:\n\t@KERNEL_SRC=%s BUILD=%s FORKLAB_PATCHES=%s FORKLAB_KUNIT=%s %s\n' \
		"$scratch/user" "$scratch/build" "$fixtures/patches-ok" \
		"$fixtures/kunit" "$here/tools/setup/prepare-tree" > "$scratch/parent.mk"
	expect_exit 0 make -w -C "$scratch" -f "$scratch/parent.mk" &&
	expect_in 'ready: Linux 6.12.117, 1 patches' "$scratch/stdout"
}

# The user's tree is read, never written; their source stays pristine.
t prepare_tree_never_writes_user_tree
prepare_tree_never_writes_user_tree() {
	user_tree
	local before after
	before=$(cd "$scratch/user" && find . -printf '%P %s %T@\n' | sort | sha256sum)
	KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	after=$(cd "$scratch/user" && find . -printf '%P %s %T@\n' | sort | sha256sum)
	[ "$before" = "$after" ] || fail "the user's tree changed"
	diff -r "$fixtures/tree" "$scratch/user" >/dev/null || fail "the user's tree changed"
}

# An edited test file is picked up, and only that file is rewritten: the
# patched files keep their mtime, so the kernel is not rebuilt.
t prepare_tree_picks_up_changes_only
prepare_tree_picks_up_changes_only() {
	user_tree
	local kunit=$scratch/kunit m1 m2
	cp -a "$fixtures/kunit" "$kunit"
	KUNIT=$kunit KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	m1=$(stat -c %y "$scratch/build/src/linux/mm/memory.c")
	sleep 1.1
	echo '/* edited */' >> "$kunit/fixture_test.c"
	KUNIT=$kunit KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in '1 files written' "$scratch/stdout" || return 1
	grep -q edited "$scratch/build/src/linux/mm/forklab/fixture_test.c" ||
		fail "edit not picked up"
	m2=$(stat -c %y "$scratch/build/src/linux/mm/memory.c")
	[ "$m1" = "$m2" ] || fail "mm/memory.c rewritten although unchanged"
}

# A patch that does not apply: named with its file; the last good tree stays.
t prepare_tree_names_failing_patch
prepare_tree_names_failing_patch() {
	user_tree
	KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	local before
	before=$(cd "$scratch/build/src/linux" && find . -type f | sort | xargs sha256sum | sha256sum)
	PATCHES=$fixtures/patches-bad KERNEL_SRC=$scratch/user expect_exit 1 prepare &&
	one_line_stderr &&
	expect_in '0002-a-change-the-fake-tree-does-not-have.patch does not apply' "$scratch/stderr" &&
	expect_in '(mm/memory.c)' "$scratch/stderr" || return 1
	[ "$before" = "$(cd "$scratch/build/src/linux" && find . -type f | sort | xargs sha256sum | sha256sum)" ] ||
		fail "the prepared tree changed although a patch failed"
	[ ! -e "$scratch/build/src/staging" ] || fail "staging left behind"
}

# A tree that already has a patch of the series (a backport, in a user's
# newer tree) is prepared without it, and says so.
t prepare_tree_skips_a_patch_the_tree_has
prepare_tree_skips_a_patch_the_tree_has() {
	user_tree
	patch -s -d "$scratch/user" -p1 < "$fixtures/patches-ok/0001-mm-make-vma_needs_copy-visible-to-KUnit-tests.patch" ||
		fail "cannot patch the user tree"
	KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in '0001-mm-make-vma_needs_copy-visible-to-KUnit-tests.patch: already in' "$scratch/stdout" || return 1
	cmp -s "$scratch/user/mm/memory.c" "$scratch/build/src/linux/mm/memory.c" ||
		fail "mm/memory.c patched twice"
}

# A patch dropped from the series: the file it wrote goes back to pristine.
t prepare_tree_reverts_dropped_patch
prepare_tree_reverts_dropped_patch() {
	user_tree
	KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	PATCHES=$fixtures/patches-none KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in '0 patches' "$scratch/stdout" || return 1
	cmp -s "$fixtures/tree/mm/memory.c" "$scratch/build/src/linux/mm/memory.c" ||
		fail "mm/memory.c still patched"
}

# A git tree is copied by its tracked files, as they are in the work tree.
t prepare_tree_copies_git_tracked_files
prepare_tree_copies_git_tracked_files() {
	user_tree
	(cd "$scratch/user" && git init -q && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm t) || return 1
	echo junk > "$scratch/user/untracked.o"
	echo '/* local edit */' >> "$scratch/user/kernel/fork.c"
	KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	[ ! -e "$scratch/build/src/linux/untracked.o" ] || fail "copied an untracked file"
	grep -q 'local edit' "$scratch/build/src/linux/kernel/fork.c" ||
		fail "missed an uncommitted edit"
}

t prepare_tree_rejects_in_tree_build
prepare_tree_rejects_in_tree_build() {
	user_tree
	touch "$scratch/user/.config"
	KERNEL_SRC=$scratch/user expect_exit 1 prepare &&
	one_line_stderr && expect_in 'holds an in-tree build' "$scratch/stderr"
}

# A tree of another version is named in one line before anything is
# copied: a 6.1 tree without KERNEL=6.1 (whose series would not apply),
# and a version forklab has no series for.
t prepare_tree_rejects_other_versions
prepare_tree_rejects_other_versions() {
	user_tree
	sed -i 's/^PATCHLEVEL = .*/PATCHLEVEL = 1/' "$scratch/user/Makefile"
	KERNEL_SRC=$scratch/user expect_exit 1 prepare && one_line_stderr &&
	expect_in 'is Linux 6.1.117: add KERNEL=6.1' "$scratch/stderr" || return 1
	sed -i 's/^PATCHLEVEL = .*/PATCHLEVEL = 6/' "$scratch/user/Makefile"
	KERNEL_SRC=$scratch/user expect_exit 1 prepare && one_line_stderr &&
	expect_in 'is Linux 6.6.117; forklab builds 6.12.y' "$scratch/stderr" &&
	[ ! -e "$scratch/build/src/linux" ] || fail "it wrote a tree"
}

# SERIES=none: the tree as it is, of any version, below build/unpatched:
# not a byte of the series or of kunit/, and the patched tree apart.
t prepare_tree_series_none
prepare_tree_series_none() {
	user_tree
	SERIES=sometimes KERNEL_SRC=$scratch/user expect_exit 1 prepare &&
	one_line_stderr && expect_in 'want SERIES=none' "$scratch/stderr" &&
	[ ! -e "$scratch/build/unpatched" ] || fail "a bad SERIES wrote a tree"
	KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	sed -i 's/^PATCHLEVEL = .*/PATCHLEVEL = 6/' "$scratch/user/Makefile"
	SERIES=none KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in 'is Linux 6.6.117, built without the series' "$scratch/stdout" &&
	expect_in 'ready: Linux 6.6.117, 0 patches' "$scratch/stdout" || return 1
	diff -r "$scratch/user" "$scratch/build/unpatched/src/linux" > "$scratch/diff" ||
		fail "the unpatched tree differs from the source: $(head -n 3 "$scratch/diff")"
	grep -q '^VISIBLE_IF_KUNIT bool$' "$scratch/build/src/linux/mm/memory.c" ||
		fail "the patched tree lost its patch"
}

t prepare_tree_rejects_missing_tarball
prepare_tree_rejects_missing_tarball() {
	rm -rf "$scratch/build"
	FORKLAB_TARBALL=$scratch/none.tar.xz expect_exit 1 prepare &&
	one_line_stderr && expect_in 'none.tar.xz is missing' "$scratch/stderr"
}

# The tree is written once: a cold run leaves no second whole tree under
# build/src (beside linux/, only the touched files' pristine bytes in
# orig/), and an interrupted unpack (linux.new without its id) is not
# taken for a complete one when the tarball changes.
t prepare_tree_unpacks_once
prepare_tree_unpacks_once() {
	user_tree
	local tar=$scratch/linux-source.tar.xz s=$scratch/build/src
	tar -cJf "$tar" -C "$scratch" --transform 's|^user|linux-source-6.12|' user ||
		return 1
	FORKLAB_TARBALL=$tar expect_exit 0 prepare &&
	expect_in 'ready: Linux 6.12.117, 1 patches' "$scratch/stdout" || return 1
	[ "$(find "$s" -name fork.c | wc -l)" = 1 ] ||
		fail "the tree is copied twice: $(find "$s" -name fork.c)"
	cmp -s "$fixtures/tree/mm/memory.c" "$s/orig/mm/memory.c" ||
		fail "no pristine copy of the patched mm/memory.c"
	mkdir -p "$s/linux.new/mm"
	echo junk > "$s/linux.new/junk"
	echo '/* the next release */' >> "$scratch/user/kernel/fork.c"
	tar -cJf "$tar" -C "$scratch" --transform 's|^user|linux-source-6.12|' user ||
		return 1
	FORKLAB_TARBALL=$tar expect_exit 0 prepare || return 1
	grep -q 'the next release' "$s/linux/kernel/fork.c" ||
		fail "the changed tarball was not unpacked"
	[ ! -e "$s/linux/junk" ] || fail "an interrupted unpack was taken for a complete one"
	[ ! -e "$s/linux.new" ] || fail "linux.new left behind"
}

# KERNEL=6.1 takes 6.1's tarball and series and builds under build/6.1:
# a tarball of another version is refused with one line, and nothing is
# left in either tree's directory; an unknown KERNEL is refused too.
t prepare_tree_keeps_each_kernel_apart
prepare_tree_keeps_each_kernel_apart() {
	user_tree
	local tar=$scratch/linux-source.tar.xz
	tar -cJf "$tar" -C "$scratch" --transform 's|^user|linux-source-6.12|' user ||
		return 1
	KERNEL=6.1 FORKLAB_TARBALL=$tar expect_exit 1 prepare &&
	one_line_stderr && expect_in 'holds Linux 6.12.117, not 6.1' "$scratch/stderr" &&
	[ ! -e "$scratch/build/6.1/src/linux" ] && [ ! -e "$scratch/build/src/linux" ] ||
		fail "a tree was left behind"
	KERNEL=6.1 FORKLAB_TARBALL=$scratch/none.tar.xz expect_exit 1 prepare &&
	expect_in "run 'make deps KERNEL=6.1' (Debian package linux-source-6.1)" \
		"$scratch/stderr" || return 1
	KERNEL=5.10 expect_exit 1 prepare &&
	one_line_stderr && expect_in 'KERNEL=5.10: forklab builds 6.12 or 6.1' "$scratch/stderr"
}

# Your git tree edited: only the edited file is copied again, the others
# keep their mtime (the kernel build stays incremental); a file you deleted
# goes. The copy's mtime is when it was copied, not the source's: an edit
# older than the last build must still rebuild its object.
t prepare_tree_updates_own_tree_in_place
prepare_tree_updates_own_tree_in_place() {
	user_tree
	local linux=$scratch/build/src/linux m1 m2 start
	echo '/* to be deleted */' > "$scratch/user/mm/gone.c"
	(cd "$scratch/user" && git init -q && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm t) || return 1
	KERNEL_SRC=$scratch/user expect_exit 0 prepare || return 1
	m1=$(stat -c %y "$linux/Makefile" "$linux/mm/memory.c" "$linux/mm/Kconfig")
	echo '/* your edit */' >> "$scratch/user/kernel/fork.c"
	touch -d 2001-01-01 "$scratch/user/kernel/fork.c"
	git -C "$scratch/user" rm -q mm/gone.c || return 1
	start=$(date +%s)
	KERNEL_SRC=$scratch/user expect_exit 0 prepare &&
	expect_in '2 files written' "$scratch/stdout" || return 1
	grep -q 'your edit' "$linux/kernel/fork.c" || fail "the edit was not copied"
	[ "$(stat -c %Y "$linux/kernel/fork.c")" -ge "$start" ] ||
		fail "the copy of kernel/fork.c has the source's (older) mtime"
	[ ! -e "$linux/mm/gone.c" ] || fail "a file deleted in the source stayed"
	m2=$(stat -c %y "$linux/Makefile" "$linux/mm/memory.c" "$linux/mm/Kconfig")
	[ "$m1" = "$m2" ] || fail "unchanged files were rewritten"
}
