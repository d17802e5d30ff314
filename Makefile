# SPDX-License-Identifier: GPL-2.0
#
# forklab: every entry point. 'make help' lists them.

BUILD ?= $(CURDIR)/build
export BUILD
# Debian's programs first, as for every tool (tools/lib/forklab.sh says why).
export PATH := /usr/bin:$(PATH)
# The target: ARCH=um (UML, the default) or x86_64 (QEMU), and SANITIZE=1
# (um: the suites on a KASAN/lockdep/kmemleak/UBSAN build). Every entry
# point below takes them: 'make check ARCH=x86_64'. What differs between
# targets is in one table, configs/forklab.toml; RES is where this one's
# results go.
SANITIZE ?= 0
# The kernel tree: KERNEL=6.12 or 6.1, Debian 12's own (docs/trees.md);
# empty, the table's first (configs/forklab.toml). KERNEL=debian: Debian
# 12's binary kernel, as its users boot it (docs/targets.md), on x86_64.
KERNEL ?=
# SERIES=none: the tree (Debian's, or KERNEL_SRC=) without forklab's
# series, on x86_64: the user-space suite only, its results below
# build/unpatched/ (docs/targets.md).
SERIES ?=
ifeq ($(origin ARCH),undefined)
ARCH := $(shell KERNEL=$(KERNEL) tools/lib/target --arch 2> /dev/null)
endif
export ARCH SANITIZE KERNEL SERIES
# SHARD=K/N reaches only the three runs that cut themselves in shards
# (below): make test and make check run everything.
unexport SHARD
# $(shell) sees make's environment, not its exports: KERNEL is passed.
TARGET = BUILD=$(BUILD) KERNEL=$(KERNEL) SERIES=$(SERIES) tools/lib/target $(ARCH) $(SANITIZE)
RES := $(shell $(TARGET) res 2> /dev/null)
ifeq ($(RES),)
$(error $(shell $(TARGET) 2>&1 > /dev/null))
endif
# The default target (no suffix) runs the tools' tests too; a target
# without a coverage gate (the sanitizer build) has no coverage step.
SUFFIX := $(shell $(TARGET) suffix)
GATE := $(shell $(TARGET) gate)
# A binary kernel's initramfs (KERNEL=debian: configs/forklab.toml's
# [[binaries]]): that kernel is downloaded and booted, not built.
INITRD := $(shell $(TARGET) initrd)
# 1 when the kernel has forklab's KUnit suites: not a binary kernel's,
# nor a tree's without the series.
KUNIT := $(shell $(TARGET) kunit)

KUNIT_PY = $(shell $(TARGET) tree)/tools/testing/kunit/kunit.py

.PHONY: all deps tree build test test-loaded kunit mm-tests policies coverage test-tools \
	check durations upstream-runners \
	lint results expected report compare differences save bisect test-slow merge repeat stress mutate mutate-tools ci-share museum repros live-reports bench help clean

# The main job: prepare, build, run every suite, write the coverage report.
all: deps tree test $(if $(GATE),coverage)
	@echo "forklab: KUnit results: $(RES)/kunit.json"
	$(if $(GATE),@echo "forklab: coverage report: $(RES)/coverage/html/index.html")

help:
	@echo "make            deps, tree, test, coverage; print where the report is"
	@echo "                ARCH=x86_64 (any target below): the x86_64 kernel under"
	@echo "                QEMU, results in build/x86_64 (default ARCH=um: UML)"
	@echo "make deps       apt-get install what is missing (tools/setup/deps)"
	@echo "make tree       unpack, patch and wire build/src/linux (tools/setup/prepare-tree)"
	@echo "                KERNEL_SRC=/path/to/linux uses your tree, never writing to it"
	@echo "make build      build the target's kernel only (tools/run/kunit --build-only)"
	@echo "make test       kunit, then mm-tests"
	@echo "make test-loaded  make test again (RERUN=1) beside two CPU-bound loops:"
	@echo "                a busy machine must not change a verdict"
	@echo "make kunit      build ARCH and run the KUnit suites (tools/run/kunit)"
	@echo "make mm-tests   mm-tests/ and selftests/mm/cow.c in the guest (tools/run/mm-tests)"
	@echo "make durations  add the last mm-tests run's times to configs/durations, whose"
	@echo "                margin over them is each program's limit"
	@echo "make policies   both again under each fork_copy= policy (tools/run/policies)"
	@echo "                POLICIES=\"always skip-shared\" picks some"
	@echo "make coverage   lcov + genhtml into build/coverage/html, then the gate"
	@echo "make test-tools the tools' own tests (tests/run)"
	@echo "make test-slow  the tools' tests that build kernels of their own (make"
	@echo "                bisect's), then the tool mutants only they kill"
	@echo "make check      all of the above, then every suite's results"
	@echo "                SANITIZE=1: the suites on a KASAN/lockdep/kmemleak/UBSAN build"
	@echo "make lint       checkpatch, shellcheck, pyflakes over forklab's code"
	@echo "                (tools/lint/run; kept findings: tools/lint/exceptions)"
	@echo "make results    'N passed, N failed, N skipped' over every suite"
	@echo "make expected   write configs/expected anew from the last run of each suite (review its diff)"
	@echo "make report     build/report/index.html: results, coverage gate, mutants (tools/judge/report)"
	@echo "make compare A=RUN B=RUN  the rows whose verdict differs from run A to run B (a"
	@echo "                results folder, or a NAME of make save); build/compare.json;"
	@echo "                exit 1 when B regressed (tools/judge/compare); COMMON=1: only"
	@echo "                the suites both ran"
	@echo "make differences  CI's comparisons: make check against each policy of make"
	@echo "                policies and each tree of make check KERNEL=; build/compare/"
	@echo "                (tools/judge/differences; reports, judges nothing)"
	@echo "make save NAME=NAME  keep the target's results in build/runs/NAME, for A= or B="
	@echo "make bisect GOOD=REV BAD=REV ROW=ROW KERNEL_SRC=GIT_TREE  the first commit"
	@echo "                where ROW (a museum exhibit, an mm-tests program, a KUnit"
	@echo "                suite) fails: git bisect run in a clone under build/bisect"
	@echo "                (tools/run/bisect)"
	@echo "make repeat     boot the built kernel N times (N=20): rows that changed verdict; the KTAP must not change"
	@echo "make stress     repeat, and the user-space suite N times (N=5): same verdicts"
	@echo "make upstream-runners  the tree's run_kselftest.sh running run_vmtests.sh -t"
	@echo "                CATEGORY (default mmap), unmodified, in the guest; then their"
	@echo "                rows' verdicts (tools/run/upstream-runners)"
	@echo "make mutate     every mutants/*.patch must be killed (tools/run/mutants)"
	@echo "                SHARD=K/N (mutate, mm-tests, policies): every N-th from the K-th"
	@echo "make mutate-tools every tests/mutants/*.patch (a broken tool) must fail a"
	@echo "                tools' test it names (tools/run/mutate-tools)"
	@echo "make merge      join the shards of every run in build/ (tools/judge/merge)"
	@echo "make museum     every real bug of museum/ caught and shown (tools/run/museum)"
	@echo "make repros DIR=FOLDER  each reproducer FOLDER/*.c (syzbot's layout) built, run"
	@echo "                in the guest, judged by the console (tools/run/repros); ONLY=REGEX"
	@echo "                picks by title"
	@echo "make live-reports each live bug of the last runs on kernels without the series,"
	@echo "                as a stable request and a Debian report: patches/stable/, debian/"
	@echo "make ci-share   CI's share of mutate and museum: what the change touches and a"
	@echo "                rotating shard (tools/ci/share --list says which)"
	@echo "make bench      the 2005 measurements and today's fork cost: docs/RESULTS.md, its"
	@echo "                plots (tools/bench/all); QUICK=1: the shape, into build/bench/docs/"
	@echo "make clean      remove build/ (the ccache in ~/.ccache stays)"
	@echo
	@echo "Variables (configs/forklab.toml's [env], where each is described):"
	@PYTHONPATH=tools/lib python3 -m forklab.table env --kind choice

# The Debian packages, then the npm packages (into build/npm): without
# those (offline), the tests that run them skip, the report lists the
# mutants as a table.
deps:
	@tools/setup/deps && { tools/setup/npm || true; }

tree: deps
	@tools/setup/prepare-tree

# Build, then both suites at once: the KUnit boot (its output in
# RES/kunit-run.log, printed after the user-space suite's) beside the
# user-space suite's boots. Both run even if one fails: CI counts every
# result. A kernel that does not build runs neither.
SUITES = tools/run/kunit --no-build > $(RES)/kunit-run.log 2>&1 & kunit=$$!; \
	tools/run/mm-tests || status=1; \
	wait $$kunit || status=1; cat $(RES)/kunit-run.log
# The kernel alone (CI builds it once per target, to fill the cache
# the other jobs of the target build from).
build: tree
	@tools/run/kunit --build-only

ifneq ($(INITRD),)
# A binary kernel: its package downloaded, unpacked and given an
# initramfs (tools/setup/binary-kernel), then the user-space suite: its
# config has no KUnit.
test: tree
	@tools/setup/binary-kernel $(if $(FLAVOUR),--flavour $(FLAVOUR)) $(if $(DEB),--deb $(DEB)) \
		$(KERNEL) && tools/run/mm-tests
else ifeq ($(KUNIT),)
# A tree without the series: its build, then the user-space suite.
test: tree
	@tools/run/kunit --build-only && tools/run/mm-tests
else
test: tree
	@tools/run/kunit --build-only || exit 1; \
	status=0; mkdir -p $(RES); $(SUITES); exit $$status
endif

# A verdict that depends on the load is wrong on a busy machine (CI's,
# a laptop's): the suites again, booted anew, with both CPUs kept busy by
# two loops that spin until the run ends.
test-loaded: tree
	@hogs=; trap 'kill $$hogs 2> /dev/null' EXIT; \
	for i in 1 2; do sh -c 'while :; do :; done' & hogs="$$hogs $$!"; done; \
	RERUN=1 $(MAKE) --no-print-directory test

kunit: tree
	@tools/run/kunit

mm-tests: tree
	@SHARD=$(SHARD) tools/run/mm-tests

policies: tree
	@SHARD=$(SHARD) tools/run/policies $(POLICIES)

# Each program's limit is a margin over its recorded durations: record
# the last passing run's (of a quiet machine) for the target and tree.
durations:
	@tools/run/mm-tests --record

# Coverage of the last 'make test' run; the gate fails on an unmet spec line.
coverage:
	@tools/judge/coverage

test-tools: tree
	@tests/run

# The tools' tests too slow for make check (each builds a kernel of its
# own: make bisect's on a made-up history), then the tool mutants only
# they can kill (CI's matrix); no baseline run of those tests on a copy:
# they just passed here.
test-slow: tree
	@tests/run --part slow && tools/run/mutate-tools --slow --no-baseline

# README's test command. The tools' tests come after coverage: some boot
# UML (a hang among them), and coverage is that of the suites. The KUnit
# and mm-tests summaries are printed again last, by 'kunit.py parse' (of
# the KTAP in which tools/judge/console-scan failed the tests the kernel
# complained in).
# The tools' tests run on the default target only (they are the same on
# every target).
# Then the results as JUnit XML and KCIDB JSON (RES/junit.xml,
# RES/kcidb.json: tools/judge/export), and the page of every target's
# (build/report/index.html: tools/judge/report). Last, make check's
# verdict (tools/judge/results --target): every row of its suites held
# against configs/expected, one line per row that is not as expected; a
# vanished row, an unexpected skip or a program that crashed after its
# rows fail make check here, as they fail CI.
PARSE = $(if $(KUNIT),python3 $(KUNIT_PY) parse $(RES)/kunit.ktap | tail -n 1;,) \
	python3 $(KUNIT_PY) parse $(RES)/mm-tests/results.ktap | tail -n 1
ifneq ($(SUFFIX),)
# judge/export writes the results of a failed run too: CI shows those.
# Without forklab's KUnit suites (a binary kernel, a tree without the
# series) the verdict is the results model's alone: a program that fails
# for a live bug of that kernel fails make test, not make check (a kernel
# that did not build leaves no results, which fails it).
check: deps tree
	@status=0; \
	$(MAKE) --no-print-directory test || $(if $(KUNIT),status=1,:); \
	if [ $$status = 0 ] && [ -n "$(GATE)" ]; then \
		$(MAKE) --no-print-directory coverage || status=1; fi; \
	$(PARSE); \
	tools/judge/export || status=1; \
	tools/judge/report || status=1; \
	tools/judge/results --target || status=1; \
	exit $$status
else
# While the kernel builds: the tools' tests that need no kernel (tests/run
# --part early; output in build/tests/early.log). After the suites,
# coverage (lcov, one CPU) runs beside the tools' tests that boot the
# kernel (tests/run --part late, which prints the KTAP of all); their
# boots write no .gcda file there.
check: deps tree
	@status=0; mkdir -p $(BUILD)/tests; \
	tests/run --part early > $(BUILD)/tests/early.log 2>&1 & early=$$!; \
	tools/run/kunit --build-only || status=1; \
	if [ $$status = 0 ]; then $(SUITES); fi; \
	$(MAKE) --no-print-directory coverage > $(BUILD)/tests/coverage.log 2>&1 & coverage=$$!; \
	wait $$early || status=1; \
	tests/run --part late || status=1; \
	wait $$coverage || status=1; \
	cat $(BUILD)/tests/coverage.log; \
	$(PARSE); \
	tools/judge/export || status=1; \
	tools/judge/report || status=1; \
	tools/judge/results --target || status=1; \
	exit $$status
endif

# checkpatch.pl is the prepared tree's.
lint: deps tree
	@tools/lint/run

report:
	@tools/judge/report

results:
	@tools/judge/results

# Two runs' rows whose verdict differs (A= and B=: a results folder, or a
# run make save kept); exit status 1 when B has a regression against A.
# COMMON=1: only the suites both ran (two trees' runs).
compare:
	@tools/judge/compare $(if $(COMMON),--common) "A=$(A)" "B=$(B)"

# CI's comparisons: make check's results against each other policy's and
# each other tree's, reported only (judge/results gives the verdict).
differences:
	@tools/judge/differences

# The first commit of KERNEL_SRC (a git tree) from GOOD to BAD on which
# ROW fails: git bisect run in a clone of it below build/bisect, each
# step built as the target's kernel (tools/run/bisect).
bisect: deps
	@tools/run/bisect "GOOD=$(GOOD)" "BAD=$(BAD)" "ROW=$(ROW)"

# The target's results kept as build/runs/NAME: a run to compare later
# runs against, whatever make check writes over RES.
save:
	@tools/judge/compare --save "$(NAME)" $(RES)

# configs/expected written anew from the last run of each suite: review
# its diff (git diff configs/expected) as what the change did to the rows.
expected:
	@tools/judge/results --write-expected

# Mutation testing: each wrong kernel in mutants/ must fail a suite.
mutate: tree
	@SHARD=$(SHARD) tools/run/mutants

# The tools' own mutation testing: each broken tool of tests/mutants/
# must fail a tools' test (a copy of the checkout each, under
# build/mutate-tools/).
# CI's share of the matrix's make mutate and make museum runs (after
# the builds of every target: .ci/run's last step).
ci-share: tree
	@tools/ci/share

mutate-tools: tree
	@tools/run/mutate-tools

# SHARD=K/N runs of make mutate, mm-tests and policies (each CI job
# one), joined into the results of one run.
merge:
	@tools/judge/merge

# The museum: upstream's fork fixes reversed, each caught by a suite and
# shown by its reproducer; writes docs/MUSEUM.md.
museum: tree
	@tools/run/museum

# Other people's reproducers (syzbot's: one .c each, its header the bug's
# title and link), each built statically and run in the target's guest,
# judged by the console: DIR= the folder, ONLY= a regex on the titles.
repros:
	@tools/run/repros "$(DIR)"

# Each live bug the last runs showed (make check KERNEL=debian, SERIES=none
# make check ARCH=x86_64, each with forklab's own run of the tree for
# "after"), ready to send: patches/stable/ and patches/debian/
# (docs/upstream.md). Nothing is sent.
live-reports:
	@tools/judge/live-reports

# The thread's measurements (fork time against shm size; a kbuild per
# policy), both targets and the host: docs/RESULTS.md and its plots.
bench: deps
	@tools/bench/all

# Determinism: the same build gives the same KTAP, run after run.
repeat:
	@tools/run/repeat $(or $(N),20)

# Both suites, N times each (tools/run/stress).
stress:
	@tools/run/stress $(or $(N),5)

# The tree's run_kselftest.sh and run_vmtests.sh -t CATEGORY, as upstream
# wrote them, in the guest of ARCH (tools/run/upstream-runners); then
# their rows against configs/expected, which lists the default category's.
upstream-runners: tree
	@status=0; CATEGORY="$(CATEGORY)" tools/run/upstream-runners || status=1; \
	$(if $(filter-out mmap,$(or $(CATEGORY),mmap)),:,tools/judge/results --suite upstream$(shell $(TARGET) suite) || status=1); \
	exit $$status

clean:
	rm -rf $(BUILD)
