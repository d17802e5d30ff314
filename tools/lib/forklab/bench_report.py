# SPDX-License-Identifier: GPL-2.0
"""bench/report: the figures of tools/bench/fork, cost and kbuild.

Reads the raw output in build/bench/, checks the exact counts (under
fork_copy=always every fork copies the segment's size / 4 KiB ptes, under
lazy and skip-shared none; private memory: 256 ptes per MiB of 4 KiB and
64 KiB folios, one pmd or huge pte per 2 MiB of THP and hugetlb), fits
the cost model (forklab.costs), prints one line per figure:

  bench: um: always/lazy fork time at 1024 MiB: 3.1x (slope always 1.52 ms/100 MiB, lazy 0.01)

and writes docs/RESULTS.md with its plots (gnuplot: PNG and SVG). Nothing
in docs/ changes unless every check passed and every plot was drawn.
"""

import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

import forklab
from forklab import costs

POLICIES = ['always', 'skip-shared', 'lazy']
# Nick Piggin's names for the same three variants (the kbuild seed).
NICK = {'always': 'plain', 'skip-shared': 'nocopy shared', 'lazy': 'nocopy all'}
TARGETS = ['um', 'x86_64']
PAGE = 4096


class BenchError(Exception):
    pass


class Fields(dict):
    def __missing__(self, key):
        raise BenchError('no %s= in %r' % (key, self.line))


def kv(text):
    try:
        f = Fields(item.split('=', 1) for item in text.split())
    except ValueError:
        raise BenchError('not KEY=VALUE pairs: %r' % text) from None
    f.line = text.strip()
    return f


def spread(samples):
    return min(samples), statistics.median(samples), max(samples)


def fit(xs, ys):
    """Least squares y = a + b x: (b, a, r^2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0:
        raise BenchError('a slope needs two sizes or more')
    b = sxy / sxx
    r2 = (sxy * sxy) / (sxx * syy) if syy else 1.0
    return b, my - b * mx, r2


def read_guest(path):
    """forkbench's '# bench:' lines: {(policy, mib): row}."""
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith('not ok '):
                raise BenchError('%s: forkbench failed a check: %s' % (path, line.strip()))
            if not line.startswith('# bench: '):
                continue
            r = kv(line[len('# bench: '):])
            try:
                row = {k: int(r[k]) for k in
                       ('mib', 'forks', 'pages', 'ptes', 'skips', 'forced',
                        'present', 'faults')}
                row['ms'] = [float(u) / 1000 for u in r['us'].split(',')]
            except (KeyError, ValueError) as e:
                raise BenchError('%s: bad line %r (%s)' % (path, line.strip(), e))
            if len(row['ms']) != row['forks']:
                raise BenchError('%s: %d samples for %d forks'
                                 % (path, len(row['ms']), row['forks']))
            if (r['policy'], row['mib']) in rows:
                raise BenchError('%s: %s at %d MiB twice' % (path, r['policy'], row['mib']))
            rows[(r['policy'], row['mib'])] = row
    if not rows:
        raise BenchError('%s: no "# bench:" lines' % path)
    return rows


def check_guest(target, rows):
    """The exact counts of every size and policy: fail on the first wrong one."""
    sizes = sorted({mib for _, mib in rows})
    if len(sizes) < 2:
        raise BenchError('%s: one size only (%s MiB): a slope needs two' % (target, sizes[0]))
    for mib in sizes:
        for policy in POLICIES:
            row = rows.get((policy, mib))
            if row is None:
                raise BenchError('%s: no figures for fork_copy=%s at %d MiB' % (target, policy, mib))
            pages = mib * (1 << 20) // PAGE
            copies = policy == 'always'
            want = {'pages': pages, 'ptes': pages if copies else 0,
                    'present': pages if copies else 0,
                    'skips': int(bool(pages) and not copies),
                    'forced': int(bool(pages) and copies)}
            for key in ('pages', 'ptes', 'present', 'skips', 'forced'):
                if row[key] != want[key]:
                    what = {'pages': 'pages in the segment',
                            'ptes': 'ptes of the segment copied per fork',
                            'present': 'ptes present in the child',
                            'skips': 'vmas skipped for the segment',
                            'forced': 'vmas copied by the policy for the segment'}[key]
                    raise BenchError('%s: fork_copy=%s at %d MiB: %d %s, want %d'
                                     % (target, policy, mib, row[key], what, want[key]))
    return sizes


def read_host(path):
    """The seed's forktest: per size, ms per fork of each run."""
    rows = {}
    with open(path) as f:
        for line in f:
            if not line.startswith('host: '):
                continue
            r = kv(line[len('host: '):])
            mib, forks = int(r['mib']), int(r['forks'])
            if forks < 1:
                raise BenchError('%s: %d forks in %r' % (path, forks, line.strip()))
            rows.setdefault(('lazy', mib), {'mib': mib, 'forks': forks,
                                            'ms': []})
            rows[('lazy', mib)]['ms'].append(float(r['seconds']) * 1000 / forks)
    if not rows:
        raise BenchError('%s: no "host:" lines' % path)
    return rows


def read_kbuild(path):
    command, runs = None, []
    with open(path) as f:
        for line in f:
            if line.startswith('command: '):
                command = line[len('command: '):].strip()
            elif line.startswith('bench: kbuild '):
                r = kv(line[len('bench: kbuild '):])
                run = {k: (v if k == 'policy' else int(v)) for k, v in r.items()}
                if run['status'] != 0:
                    raise BenchError('%s: a build failed: %s' % (path, line.strip()))
                runs.append(run)
    if not runs:
        raise BenchError('%s: no "bench: kbuild" lines' % path)
    # What each policy must do to the build's forks, exactly: always skips
    # no vma, lazy some and copies none for the policy's sake.
    for run in runs:
        bad = {'always': run['vma_skip'] != 0,
               'skip-shared': run['vma_copy_policy'] == 0,
               'lazy': run['vma_skip'] == 0 or run['vma_copy_policy'] != 0}.get(run['policy'], True)
        if bad or run['elapsed_ms'] <= 0 or run['minflt'] <= 0:
            raise BenchError('%s: run %d under fork_copy=%s: counters unlike the policy '
                             '(vma_skip %d, vma_copy_policy %d, elapsed %d ms, %d faults)'
                             % (path, run['run'], run['policy'], run['vma_skip'],
                                run['vma_copy_policy'], run['elapsed_ms'], run['minflt']))
    return command, runs


def ms(x):
    return '%.2f' % x if x < 100 else '%.0f' % x


def target_summary(name, rows):
    """Slopes per policy, and the ratio at the largest size."""
    out = {}
    sizes = sorted({mib for _, mib in rows})
    for policy in POLICIES:
        pts = [(mib, spread(rows[(policy, mib)]['ms'])) for mib in sizes
               if (policy, mib) in rows]
        if len(pts) < 2:
            continue
        slope, icpt, r2 = fit([m for m, _ in pts], [s[1] for _, s in pts])
        # Noise: the median, over sizes, of the samples' max - min.
        noise = statistics.median(s[2] - s[0] for _, s in pts)
        growth = pts[-1][1][1] - pts[0][1][1]
        out[policy] = {'slope': slope * 100, 'intercept': icpt, 'r2': r2,
                       'noise': noise, 'growth': growth, 'pts': pts}
    top = sizes[-1]
    line = None
    if 'always' in out and 'lazy' in out:
        ratio = (spread(rows[('always', top)]['ms'])[1] /
                 spread(rows[('lazy', top)]['ms'])[1])
        line = ('bench: %s: always/lazy fork time at %d MiB: %.1fx '
                '(slope always %.2f ms/100 MiB, lazy %.2f)'
                % (name, top, ratio, out['always']['slope'], out['lazy']['slope']))
        out['ratio'] = ratio
    elif 'lazy' in out:
        line = ('bench: %s: fork time at %d MiB: %s ms, at %d MiB: %s ms (slope lazy %.2f ms/100 MiB)'
                % (name, top, ms(out['lazy']['pts'][-1][1][1]), sizes[0],
                   ms(out['lazy']['pts'][0][1][1]), out['lazy']['slope']))
    out['line'] = line
    out['sizes'] = sizes
    return out


def apart_sizes(rows, a, b):
    """Sizes at which policies a and b have min..max ranges apart."""
    out = []
    for mib in sorted({m for _, m in rows}):
        if (a, mib) in rows and (b, mib) in rows:
            lo_a, _, hi_a = spread(rows[(a, mib)]['ms'])
            lo_b, _, hi_b = spread(rows[(b, mib)]['ms'])
            out.append((mib, lo_a > hi_b or hi_a < lo_b))
    return out


def noise_words(rows):
    words = []
    for a, b in (('always', 'lazy'), ('skip-shared', 'lazy'), ('always', 'skip-shared')):
        cmp = apart_sizes(rows, a, b)
        if not cmp:
            continue
        apart = [m for m, x in cmp if x]
        if not apart:
            words.append('`%s` and `%s`: within noise at every size' % (a, b))
        elif len(apart) == len(cmp):
            words.append('`%s` and `%s`: apart at every size' % (a, b))
        else:
            words.append('`%s` and `%s`: apart (min..max ranges disjoint) at %s MiB only, '
                         'within noise elsewhere' % (a, b, ', '.join(str(m) for m in apart)))
    return ('; '.join(words) + '.') if words else 'One policy only: nothing to compare.'


def rising_pair(pts):
    """Two sizes whose forks are apart, the larger slower: (small, large)
    MiB, the first such pair; None when every two sizes' ranges overlap or
    the larger is the faster."""
    for i, (m0, (_, _, hi0)) in enumerate(pts):
        for m1, (lo1, _, _) in pts[i + 1:]:
            if lo1 > hi0:
                return m0, m1
    return None


def flat_words(s):
    rise = rising_pair(s['pts'])
    if rise:
        return ('not flat: its median moved %s ms from the smallest to the largest size, and '
                'the fastest fork at %d MiB was slower than the slowest at %d MiB'
                % (ms(s['growth']), rise[1], rise[0]))
    if abs(s['growth']) <= s['noise']:
        return ('flat within noise: its median moved %s ms from the smallest to the largest size, '
                'less than the typical spread of one size (%s ms, max - min)'
                % (ms(s['growth']), ms(s['noise'])))
    return ('not flat: its median moved %s ms from the smallest to the largest size, '
            'more than the typical spread of one size (%s ms)' % (ms(s['growth']), ms(s['noise'])))


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                              shell=isinstance(cmd, str)).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ''


def target_field(here, arch, field):
    """A field of forklab's target table (tools/lib/target)."""
    return run([os.path.join(here, 'tools', 'lib', 'target'), arch, '0', field])


# The accelerator each target's emulator ran under, as bench/fork and
# bench/cost record it (BENCH_OUT/accel-TARGET: kvm or tcg); raw output
# without the file is from before KVM was tried: TCG. main() reads it.
ACCEL = {}


def guest_title(t):
    """A target's name in the plots: 'x86_64 guest (QEMU, TCG)'."""
    return 'UML' if t == 'um' else 'x86_64 guest (QEMU, %s)' % ACCEL.get(t, 'TCG')


def machine(here):
    model = ''
    try:
        with open('/proc/cpuinfo') as f:
            model = next((l.split(':', 1)[1].strip() for l in f
                          if l.startswith('model name')), '')
        with open('/proc/meminfo') as f:
            mem = int(f.readline().split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        mem = 0
    return {
        'cpu': model or platform.processor(),
        'cores': os.cpu_count(),
        'kernel': platform.release(),
        'mem': mem,
        'qemu': run([target_field(here, 'x86_64', 'emulator'), '--version']).split('\n')[0],
    }


def gp_quote(s):
    return '"%s"' % s.replace('"', '')


def plots(tmp, guests, host, kbuild_runs, cost_of):
    """gnuplot scripts and data into tmp; PNG and SVG of each figure."""
    colors = {'always': '#c0392b', 'skip-shared': '#2471a3', 'lazy': '#229954'}
    panels = [(t, rows) for t, rows in guests.items()]
    if host:
        panels.append(('host', host))
    for name, rows in panels:
        for policy in POLICIES:
            pts = sorted((mib, spread(r['ms'])) for (p, mib), r in rows.items() if p == policy)
            if pts:
                with open(os.path.join(tmp, 'fork-%s-%s.dat' % (name, policy)), 'w') as f:
                    for mib, (lo, med, hi) in pts:
                        f.write('%d %.4f %.4f %.4f\n' % (mib, med, lo, hi))
            if name in guests:
                with open(os.path.join(tmp, 'ptes-%s-%s.dat' % (name, policy)), 'w') as f:
                    for (p, mib), r in sorted(rows.items(), key=lambda i: i[0][1]):
                        if p == policy:
                            f.write('%d %d\n' % (mib, r['ptes']))
    # Nick's figure is a difference: each policy against always's median.
    base = {k: statistics.median(r[k] for r in kbuild_runs if r['policy'] == 'always')
            for k in ('minflt', 'elapsed_ms')}
    with open(os.path.join(tmp, 'kbuild.dat'), 'w') as f:
        for policy in POLICIES:
            rs = [r for r in kbuild_runs if r['policy'] == policy]
            cols = []
            for k in ('minflt', 'elapsed_ms'):
                cols += [100 * (v / base[k] - 1) for v in
                         (lambda lo, med, hi: (med, lo, hi))(*spread([r[k] for r in rs]))]
            f.write('%s %s\n' % (policy, ' '.join('%.3f' % c for c in cols)))

    for term, ext, size in (('pngcairo noenhanced font ",10"', 'png', '1500,480'),
                            ('svg dynamic noenhanced font ",11"', 'svg', '1500,480')):
        n = len(panels)
        lines = ['set terminal %s size %s' % (term, size),
                 "set output 'fork-time.%s'" % ext,
                 'set multiplot layout 1,%d title "fork() time against touched SysV shm size '
                 '(median; bars: min..max)"' % n,
                 'set xlabel "segment (MiB)"', 'set ylabel "fork() time (ms)"',
                 'set key top left', 'set grid', 'set xrange [-40:1064]', 'set yrange [0:*]']
        for name, _ in panels:
            title = "host kernel, the seed's forktest.c" if name == 'host' else guest_title(name)
            plots_ = []
            for policy in POLICIES:
                dat = 'fork-%s-%s.dat' % (name, policy)
                if os.path.exists(os.path.join(tmp, dat)):
                    plots_.append("'%s' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.6 "
                                  "lc rgb '%s' title '%s'" % (dat, colors[policy], policy))
            lines += ['set title %s' % gp_quote(title), 'plot ' + ', '.join(plots_)]
        lines.append('unset multiplot')
        with open(os.path.join(tmp, 'fork-time-%s.gp' % ext), 'w') as f:
            f.write('\n'.join(lines) + '\n')

        lines = ['set terminal %s size 700,450' % term, "set output 'fork-ptes.%s'" % ext,
                 'set title "ptes fork copied for the segment, per fork (fork_* counters)"',
                 'set xlabel "segment (MiB)"', 'set ylabel "ptes copied"', 'set key top left',
                 'set grid', 'set xrange [-40:1064]', 'set yrange [-5000:*]']
        plots_ = []
        for name in guests:
            for policy in POLICIES:
                plots_.append("'ptes-%s-%s.dat' using 1:2 with linespoints pt %d ps 1.2 "
                              "lc rgb '%s' title '%s, %s'"
                              % (name, policy, 6 if name == 'um' else 2,
                                 colors[policy], name, policy))
        lines.append('plot ' + ', '.join(plots_))
        with open(os.path.join(tmp, 'fork-ptes-%s.gp' % ext), 'w') as f:
            f.write('\n'.join(lines) + '\n')

        lines = ['set terminal %s size 1000,420' % term, "set output 'kbuild.%s'" % ext,
                 'set multiplot layout 1,2 title "kbuild inside UML: each policy against '
                 'always (plain), in % of always\'s median (bars: min..max)"',
                 'set style data histogram', 'set style histogram errorbars gap 1 lw 1',
                 'set style fill solid 0.6 border -1', 'set boxwidth 0.8', 'set grid ytics',
                 'set xtics nomirror', 'unset key',
                 'set title "minor faults (rusage); Nick, 2005: nocopy all +2.5%"',
                 'set ylabel "% against always"', 'set xzeroaxis lt -1',
                 "plot 'kbuild.dat' using 2:3:4:xtic(1) lc rgb '#2471a3'",
                 'set title "elapsed time"',
                 "plot 'kbuild.dat' using 5:6:7:xtic(1) lc rgb '#229954'",
                 'unset multiplot']
        with open(os.path.join(tmp, 'kbuild-%s.gp' % ext), 'w') as f:
            f.write('\n'.join(lines) + '\n')

    cost_plots(tmp, cost_of)
    for gp in sorted(os.listdir(tmp)):
        if gp.endswith('.gp'):
            p = subprocess.run(['gnuplot', gp], cwd=tmp, capture_output=True, text=True,
                               timeout=60)
            if p.returncode != 0:
                raise BenchError('gnuplot %s: %s' % (gp, p.stderr.strip()))
    return [f for f in os.listdir(tmp) if f.endswith(('.png', '.svg'))]


def fork_table(rows, guest):
    sizes = sorted({mib for _, mib in rows})
    head = ['| MiB | policy | median ms | min | max |']
    sep = ['|---:|---|---:|---:|---:|']
    if guest:
        head[0] += ' ptes copied / fork | child: present ptes | child: faults to read |'
        sep[0] += '---:|---:|---:|'
    out = head + sep
    for mib in sizes:
        for policy in POLICIES:
            r = rows.get((policy, mib))
            if not r:
                continue
            lo, med, hi = spread(r['ms'])
            line = '| %d | %s | %s | %s | %s |' % (mib, policy, ms(med), ms(lo), ms(hi))
            if guest:
                line += ' %d | %d | %d |' % (r['ptes'], r['present'], r['faults'])
            out.append(line)
    return '\n'.join(out)


def kbuild_section(command, runs):
    keys = [('elapsed_ms', 'elapsed (s)', 1000), ('cpu_ms', 'CPU, user + sys (s)', 1000),
            ('minflt', 'minor faults (rusage)', 1), ('pgfault', 'pgfault (/proc/vmstat)', 1),
            ('forks', 'forks (/proc/stat processes)', 1), ('pte_copy', 'ptes copied', 1),
            ('vma_skip', 'vmas skipped', 1)]
    for r in runs:
        r['cpu_ms'] = r['user_ms'] + r['sys_ms']
    nruns = len([r for r in runs if r['policy'] == 'always'])
    by = {p: [r for r in runs if r['policy'] == p] for p in POLICIES}
    lines = ['| | ' + ' | '.join('%s ("%s")' % (p, NICK[p]) for p in POLICIES) + ' |',
             '|---|' + '---:|' * len(POLICIES)]
    stats = {}
    for key, label, div in keys:
        cells = []
        for p in POLICIES:
            lo, med, hi = spread([r[key] / div for r in by[p]])
            stats[(p, key)] = (lo, med, hi)
            fmt = (lambda v: '%.1f' % v) if div > 1 else (
                lambda v: '%d' % v if v == int(v) else '%.1f' % v)
            cell = '%s (%s..%s)' % (fmt(med), fmt(lo), fmt(hi))
            if p != 'always':
                base = stats[('always', key)][1]
                if base:
                    cell += ', %+.1f%%' % (100 * (med - base) / base)
            cells.append(cell)
        lines.append('| %s | %s |' % (label, ' | '.join(cells)))
    a, l = stats[('always', 'minflt')], stats[('lazy', 'minflt')]
    pct = 100 * (l[1] - a[1]) / a[1]
    # min..max ranges that do not overlap: a difference outside the noise
    # (with fewer than 3 runs a range says nothing: within the noise).
    apart = nruns >= 3 and (l[0] > a[2] or l[2] < a[0])
    verdict = ('Nick saw "nocopy all" (lazy) take ~2.5%% more minor faults than "plain" '
               '(always). Here lazy takes %+.1f%% minor faults against always (medians of %d '
               'runs); the two policies\' ranges %s, so the difference %s. '
               % (pct, nruns, 'do not overlap' if apart else 'overlap',
                  'is outside the noise' if apart else 'is within the noise'))
    if apart and pct > 0:
        verdict += 'The sign is reproduced: lazy trades copying at fork for faults later'
        if abs(pct - 2.5) < 1:
            verdict += ', and the size too (within one point of +2.5%).'
        else:
            verdict += ('; the size is not (%+.1f%% against +2.5%%): the workload is not '
                        'Nick\'s (a whole kernel, make -j4, on a dual G5 in 2005).' % pct)
    else:
        verdict += 'Nick\'s +2.5% is not reproduced by this run.'
    e_a, e_l = stats[('always', 'elapsed_ms')], stats[('lazy', 'elapsed_ms')]
    e_apart = nruns >= 3 and (e_l[0] > e_a[2] or e_l[2] < e_a[0])
    verdict += (' Elapsed time: lazy %+.1f%% against always, ranges %s (Nick: equal within noise).'
                % (100 * (e_l[1] - e_a[1]) / e_a[1], 'apart' if e_apart else 'overlapping: '
                   'equal within noise'))
    ci, ci_words = kbuild_ci(runs)
    verdict += ' Paired by round: ' + ci_words + '.'
    short = ('bench: um kbuild: lazy minor faults %+.1f%% against always (Nick: +2.5%%), '
             '%s; elapsed %+.1f%%, %s' % (pct, 'outside the noise' if apart else 'within the noise',
                                          100 * (e_l[1] - e_a[1]) / e_a[1],
                                          'outside the noise' if e_apart else 'within the noise'))
    if ci['lo_pct'] is not None:
        short += '; paired 95%% CI of the faults %+.2f%% .. %+.2f%%' % (ci['lo_pct'], ci['hi_pct'])
    return '\n'.join(lines), verdict, nruns, short


def main():
    here = forklab.HERE
    build = os.environ.get('BUILD', os.path.join(here, 'build'))
    ap = forklab.ArgumentParser(prog='bench/report',
        description='Check and report the figures of tools/bench/fork and '
        'tools/bench/kbuild: docs/RESULTS.md and its plots.')
    ap.add_argument('--in', dest='indir', default=os.path.join(build, 'bench'),
                    help='the raw output (default: build/bench)')
    ap.add_argument('--docs', default=os.path.join(here, 'docs'),
                    help='where RESULTS.md and the plots go (default: docs/)')
    ap.add_argument('--check-only', action='store_true',
                    help='check the counts and print the summary lines; write nothing')
    ap.add_argument('--elapsed', type=int, default=None,
                    help='seconds make bench took, for RESULTS.md')
    ap.add_argument('--quick', action='store_true',
                    help='the figures are make bench QUICK=1\'s: RESULTS.md says so')
    args = ap.parse_args()
    prog = 'bench/report'

    for t in TARGETS:
        try:
            with open(os.path.join(args.indir, 'accel-%s' % t)) as f:
                ACCEL[t] = f.readline().strip().upper()
        except OSError:
            pass
    try:
        guests = {}
        for t in TARGETS:
            path = os.path.join(args.indir, 'fork-%s.ktap' % t)
            if not os.path.exists(path):
                raise BenchError('no %s: run tools/bench/fork %s' % (path, t))
            guests[t] = read_guest(path)
            sizes = check_guest(t, guests[t])
            if t != TARGETS[0] and sizes != check_guest(TARGETS[0], guests[TARGETS[0]]):
                raise BenchError('%s and %s ran different sizes: files of two runs?'
                                 % (TARGETS[0], t))
        hpath = os.path.join(args.indir, 'fork-host.txt')
        if not os.path.exists(hpath):
            raise BenchError('no %s: run tools/bench/fork host' % hpath)
        host = read_host(hpath)
        kpath = os.path.join(args.indir, 'kbuild-um.txt')
        if not os.path.exists(kpath):
            raise BenchError('no %s: run tools/bench/kbuild' % kpath)
        command, kruns = read_kbuild(kpath)
        for p in POLICIES:
            if not any(r['policy'] == p for r in kruns):
                raise BenchError('%s: no build under fork_copy=%s' % (kpath, p))

        cost_of, test_of = {}, {}
        for t in TARGETS:
            for name, into, full in (('cost-%s.ktap', cost_of, True),
                                     ('cost-%s-test.ktap', test_of, False)):
                path = os.path.join(args.indir, name % t)
                if not os.path.exists(path):
                    raise BenchError('no %s: run tools/bench/cost %s' % (path, t))
                into[t] = costs.read_cost(path)
                costs.check_cost(t, into[t], path, full)
        bpath = os.path.join(args.indir, 'cost-host.ktap')
        if not os.path.exists(bpath):
            raise BenchError('no %s: run tools/bench/cost host' % bpath)
        host_bw = costs.read_cost(bpath)['bandwidth']
        if not host_bw:
            raise BenchError('%s: no bandwidth figure' % bpath)
        model_of, floor_of = {}, {}
        for t, c in cost_of.items():
            model_of[t] = costs.cost_model(c)
            model_of[t]['base_vmas'] = c['private'][('4k', min(
                m for b, m in c['private'] if b == '4k'))]['vmas_all']
            # The floor in the guest's own memory traffic: TCG's is
            # emulated, and a pte copy there is too.
            floor_of[t] = costs.PTE_COPY_BYTES / c['bandwidth']['bytes_per_ns']

        summ = {t: target_summary(t, rows) for t, rows in guests.items()}
        summ['host'] = target_summary('host', host)
        for t in TARGETS + ['host']:
            print(summ[t]['line'])
        for t in TARGETS:
            print(private_lines(t, cost_of[t]))
            print(tradeoff_line(t, cost_of[t]))
            print(model_line(t, model_of[t], floor_of[t]))
        ktable, kverdict, nruns, kshort = kbuild_section(command, kruns)
        print(kshort)
        if args.check_only:
            return 0

        extra = {'cost_of': cost_of, 'test_of': test_of, 'model_of': model_of,
                 'floor_of': floor_of, 'host_bw': host_bw, 'quick': args.quick}
        with tempfile.TemporaryDirectory() as tmp:
            figures = plots(tmp, guests, host, kruns, cost_of)
            md = results_md(here, build, guests, host, summ, command, ktable, kverdict,
                            nruns, args.elapsed, kruns, extra)
            with open(os.path.join(tmp, 'RESULTS.md'), 'w') as f:
                f.write(md)
            os.makedirs(args.docs, exist_ok=True)
            for name in figures + ['RESULTS.md']:
                shutil.copy(os.path.join(tmp, name), os.path.join(args.docs, name + '.new'))
            for name in figures + ['RESULTS.md']:
                os.replace(os.path.join(args.docs, name + '.new'), os.path.join(args.docs, name))
        print('%s: wrote %s/RESULTS.md and %s' % (prog, args.docs, ', '.join(sorted(figures))))
    except (BenchError, costs.CostError, OSError, ValueError, ZeroDivisionError,
            subprocess.SubprocessError) as e:
        print('%s: error: %s' % (prog, e), file=sys.stderr)
        return 1
    return 0


def fault_words(guests):
    """What the reading children's faults were, from the figures."""
    out = []
    for t, rows in guests.items():
        copied = [r for (p, m), r in rows.items() if p == 'always' and r['pages']]
        skipped = [r for (p, m), r in rows.items() if p != 'always' and r['pages']]
        c = ('none' if all(r['faults'] == 0 for r in copied) else
             'one per page' if all(r['faults'] == r['pages'] for r in copied) else 'some')
        k = ('one per page' if all(r['faults'] == r['pages'] for r in skipped) else
             'between one and one per page')
        out.append('%s: %s when fork had copied the ptes, %s when it had skipped the segment'
                   % (t, c, k))
    return '; '.join(out) + ('. (UML maps a guest page into its host process on first touch, '
                             'a fault of its own.)' if any('um: one per page when fork had'
                                                           in o for o in out) else '.')


def results_md(here, build, guests, host, summ, command, ktable, kverdict, nruns, elapsed,
               kruns, extra):
    m = machine(here)

    def rel(arch, field):
        return os.path.relpath(target_field(here, arch, field), here)

    def mib(arch):
        return int(target_field(here, arch, 'mem').rstrip('M'))
    kver = run(['make', '-s', '-C', os.path.join(build, 'src', 'linux'), 'kernelversion'])
    date = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    took = ('`make bench` took %d min %d s, from a clean `build/bench` to this file.'
            % (elapsed // 60, elapsed % 60)) if elapsed else ''
    forks = next(iter(guests['um'].values()))['forks']
    hforks = next(iter(host.values()))['forks']
    hruns = len(next(iter(host.values()))['ms'])
    out = []
    w = out.append
    cost_of, test_of, model_of = extra['cost_of'], extra['test_of'], extra['model_of']
    w('# forklab results: what fork() costs, 2005 and today\n')
    if extra['quick']:
        w('**`make bench QUICK=1`: fewer sizes, forks and rounds than `make bench`. The shape '
          'of the figures, not the figures.**\n')
    w('Regenerated by `make bench` (tools/bench/fork, tools/bench/cost, tools/bench/kbuild, '
      'tools/bench/report) on %s. %s\n' % (date, took))
    w('## The machine and the kernels\n')
    w('- CPU: %s, %d cores; %d MiB of memory; host kernel %s; memcpy() on the host: '
      '%.1f GB/s (bytes read and written).' % (m['cpu'], m['cores'], m['mem'], m['kernel'],
                                              extra['host_bw']['bytes_per_ns']))
    w('- Guest kernels: Linux %s from Debian\'s linux-source with patches/ applied, the bench '
      'builds of tools/bench/kernel: each test kernel\'s .config (%s, %s) with '
      'configs/bench.config on top: no gcov, no KUnit, no DEBUG_VM, fault injection or other '
      'DEBUG_KERNEL checks, no debug info. UML: one CPU, memory as each run needs; x86_64: '
      '!SMP, %s under %s; compare slopes and ratios within one target.'
      % (kver, rel('um', 'kconfig'), rel('x86_64', 'kconfig'), m['qemu'] or 'QEMU',
         'TCG, no KVM: its absolute times are an emulator\'s, not hardware\'s'
         if ACCEL.get('x86_64', 'TCG') == 'TCG' else
         'KVM: a virtual machine\'s times, near the hardware\'s but not a bare host\'s'))
    w('- The fork_copy= policies (patches/0008), switched at run time between forks: `always` '
      'copies every vma\'s ptes (2.6.13, before the change; Nick\'s "plain"), `skip-shared` '
      'skips shared vmas only ("nocopy shared"), `lazy` is upstream\'s vma_needs_copy() '
      '("nocopy all"). Private memory has an anon_vma: every policy copies it.\n')
    w('What the test kernels\' instrumentation costs (gcov in mm/, ipc/ and kernel/fork.c on '
      'x86_64 and in all of UML, KUnit, DEBUG_VM, fault injection): the same forks of private 4 KiB memory on both '
      'kernels of each target, once:\n')
    w(kernels_section(cost_of, test_of) + '\n')
    w('## Ray\'s table: fork time against touched SysV shm\n')
    w('Ray Fucillo (2005): "about 23ms spent in fork for every 100MB of shared memory segment. '
      'After applying the patch, fork is taking about 1ms regardless of the shared memory size."\n')
    w('![fork time against shm size](fork-time.png)\n')
    w('How to read it: one panel per target; a point is the median of the forks at that size, '
      'its bar the fastest and slowest. Under `always` the time grows with the ptes copied; '
      'under `lazy` and `skip-shared` the segment is skipped and the line should stay flat. '
      'In the guests, tools/bench/forkbench forks %d times per size and policy, the policies '
      'interleaved fork by fork in all six orders; each child waits until the parent has '
      'read the clock, then exits, so a sample is one fork() alone; one more child per policy '
      'reads the whole segment for its present ptes and faults. The host panel is this '
      'machine\'s own kernel (upstream\'s lazy rule) running the seed\'s forktest.c as Ray '
      'posted it: a sample is one run\'s time to fork all %d children divided by %d, during '
      'which the children print and exit on the other core and the parent reaps them from '
      'its SIGCHLD handler; its spread is over %d runs\' averages, not over single forks, '
      'and is not comparable with the guests\'.\n' % (forks, hforks, hforks, hruns))
    w('```')
    for t in TARGETS + ['host']:
        w(summ[t]['line'])
    w('```\n')
    rows_of = dict(guests, host=host)
    for t in TARGETS + ['host']:
        s = summ[t]
        w('**%s.**' % {'um': 'UML', 'x86_64': 'x86_64 guest', 'host': 'Host kernel'}[t])
        for policy in POLICIES:
            if policy in s:
                p = s[policy]
                w('- `%s`: %.2f ms per 100 MiB (least squares over the medians, r\u00b2 %.3f); '
                  '%s.' % (policy, p['slope'], p['r2'], flat_words(p)))
        w('- ' + noise_words(rows_of[t]))
        if 'ratio' in s:
            w('- At %d MiB a fork under `always` takes %.1fx the time of one under `lazy`.'
              % (max(s['sizes']), s['ratio']))
        w('')
    w('What is and is not within noise: a difference between two medians is only read as one '
      'when their min..max ranges do not overlap. The counts below are exact, not sampled: '
      'forkbench checks that every timed fork moved the counters alike and that its child '
      'read the parent\'s bytes (a failed check fails the bench); tools/bench/report checks, '
      'per size and policy, the segment\'s share of fork 0\'s counters and the reading '
      'child\'s present ptes: under `always` size / 4 KiB ptes copied and present and the '
      'vma copied by the policy, under `lazy` and `skip-shared` none and the vma skipped.\n')
    w('UML: a fork there includes creating a host process (noisy), and copies a pte cheaply, '
      'which caps its always/lazy ratio (%.1fx here against %.1fx in the x86_64 guest); its '
      'slopes are the figure to compare.' % (summ['um'].get('ratio', 0),
                                            summ['x86_64'].get('ratio', 0)))
    if 'lazy' in summ['um'] and rising_pair(summ['um']['lazy']['pts']):
        w(' Its `lazy` forks grow with the segment too, while they copy none of its ptes '
          '(fork_pte_copy moved by 0): work on the parent\'s side that grows with the pages it '
          'has mapped, not a copy.')
    w('')
    w('![ptes copied against shm size](fork-ptes.png)\n')
    w('How to read it: the segment\'s share of fork_pte_copy per fork (a fork after shmdt() is '
      'the baseline): a straight line of slope 256 ptes per MiB under `always`, 0 under the '
      'other two, the same on both targets.\n')
    for t in TARGETS:
        w('### %s\n' % {'um': 'UML', 'x86_64': 'x86_64 guest'}[t])
        w(fork_table(guests[t], True) + '\n')
    w('"child: faults to read": the minor faults the reading child took over the whole '
      'segment. ' + fault_words(guests) + '\n')
    w('### Host kernel (%s), the seed\'s forktest.c\n' % m['kernel'])
    w(fork_table(host, False) + '\n')
    w('## Today\'s cost: private memory by folio size\n')
    w('Shared memory has been skipped since 2.6.14; what every fork still copies is each vma '
      'with an anon_vma: the private memory of a large Redis, database or zygote process. '
      'tools/bench/forkcost maps S MiB of private anonymous memory, 2 MiB aligned, backed by '
      'each kind of folio the guest has, writes one word in every 4 KiB, and forks %d times '
      '(each fork timed alone, as above); then one child writes a word in every 4 KiB of it: '
      'the COW of all of it. The counts are exact and checked: 256 ptes per MiB for 4 KiB '
      'and 64 KiB folios (6.9\'s folio_pte_batch() copies the latter in batches of 16), one '
      'pmd per 2 MiB of PMD THP (fork_pte_copy, fork_huge_copy), one huge pte per 2 MiB of '
      'hugetlb (no counter sees copy_hugetlb_page_range(): the child\'s present 4 KiB pages '
      'in pagemap right after fork, / 512), every page present in the child, and the backing '
      'itself (AnonHugePages, the 64 KiB size\'s anon_fault_alloc, HugePages_Free).\n'
      % next(iter(next(iter(cost_of.values()))['private'].values()))['forks'])
    w('![fork time against private memory](private-time.png)\n')
    w('```')
    for t in TARGETS:
        w(private_lines(t, cost_of[t]))
    w('```\n')
    for t in TARGETS:
        w('### %s\n' % {'um': 'UML', 'x86_64': 'x86_64 guest'}[t])
        w(private_section(t, cost_of[t]) + '\n')
    w('Against the published figures:\n')
    w(private_comparison(cost_of) + '\n')
    w('## The trade-off: what lazy copying moves into the child\n')
    w('vma_needs_copy() says: "The tradeoff is that copy_page_range is more efficient than '
      'faulting." The 2005 thread\'s bet was that most children touch little of what they '
      'inherit (most exec). Measured: S MiB of a mapping lazy copy skips (SysV shm, and a '
      'MAP_PRIVATE tmpfs file the parent read), every pte present in the parent; the child '
      'reads one word in each page of the first fraction f of it, timed in the child after '
      'fork returned; the total is fork() + those reads + the child\'s exit, under `always` '
      'and `lazy`, '
      'interleaved, %d rounds; the child\'s exit is timed too (under `always` it frees every '
      'pte fork copied). The break-even fraction is where `lazy` stops being cheaper '
      '(interpolated between the two fractions around it). SysV shm has no map_pages: a '
      'lazy child takes one fault per page; a file\'s faults map up to 16 pages '
      '(fault_around_bytes, 64 KiB; the mapping is 2 MiB aligned).\n'
      % len(next(iter(next(iter(cost_of.values()))['tradeoff'].values()))['fork_ms']))
    w('Each column is a median over the rounds, the total too (of each round\'s sum): the '
      'parts need not add up to it. The exit is timed from the parent\'s word to exit (the '
      'child waits for it after its report) to the end of wait(): all of the child\'s '
      'teardown.\n')
    w('![fork + the child\'s reads + its exit](tradeoff.png)\n')
    w('```')
    for t in TARGETS:
        w(tradeoff_line(t, cost_of[t]))
    w('```\n')
    for t in TARGETS:
        w(tradeoff_section(t, cost_of[t]))
    w('## A cost model\n')
    w('Least squares over every private and one-page-vma run of a target (the median fork '
      'of each): fork time = fixed + per vma x vmas + per pte x ptes + per pmd x pmds + '
      'per hugetlb pte x hugetlb ptes, the counts being that fork\'s totals (the fork_* '
      'counters\', the program\'s own vmas included; hugetlb ptes counted in the child); '
      'a column that never varies on a target is left out (n/a). 64 KiB mTHP is left out of the fit (its ptes are '
      'copied in batches). Per fault: least squares over the trade-off\'s lazy children '
      '(SysV shm faults once a page, the file once per 16 pages), read time = fixed + per '
      'page read x pages + per fault x faults. tools/bench/forkcost\'s '
      'one-page vmas (%s of them, each written, apart from the next) give the vma column its '
      'spread.\n' % ', '.join(str(c) for c in sorted(next(iter(cost_of.values()))['vmas'])))
    w(model_section(model_of, extra['floor_of'], extra['host_bw']['bytes_per_ns'], summ) + '\n')
    w('The guests\' own memcpy() bandwidth: %s.\n' % ', '.join(
        '%s %.1f GB/s' % (t, c['bandwidth']['bytes_per_ns']) for t, c in cost_of.items()))
    w('## Nick\'s table: a fork-rich build under each policy (UML)\n')
    w('Nick Piggin (2005), kbuild `make -j4` on a dual G5: equal elapsed time within noise for '
      'the three variants, "nocopy all" ~2.5% more minor faults.\n')
    w('Here, %d rounds inside UML after one unrecorded warm-up build (one boot per build, the '
      'policies rotated round by round), the host\'s / '
      'mounted read-only through hostfs, the build on a tmpfs:\n' % nruns)
    w('```\n%s\n```\n' % command)
    w('![kbuild per policy](kbuild.png)\n')
    w('Median (min..max) over the runs, and the difference of the medians against `always`:\n')
    w(ktable + '\n')
    w(kverdict + '\n')
    always = [r for r in kruns if r['policy'] == 'always']
    w('The workload is small beside Nick\'s: %d forks and %d minor faults per build (median '
      'under `always`), kconfig\'s tools and one run of them, not a kernel.%s\n'
      % (statistics.median(r['forks'] for r in always),
         statistics.median(r['minflt'] for r in always),
         ' `skip-shared` skipped no vma in any build, so its fork work is `always`\'s: the '
         'difference of their elapsed times is noise, and shows its size.'
         if all(r['vma_skip'] == 0 for r in kruns if r['policy'] == 'skip-shared') else ''))
    user = sum(r['user_ms'] for r in kruns)
    w('How to read it: the CPU time is what the guest accounted to the build%s; minor faults '
      'are the build\'s rusage (every process it waited for), pgfault every fault in the guest '
      'during the run.\n' % (', all of it as system time (user time was 0 in every run: UML '
                              'charged its processes\' time to the kernel)' if user == 0 else ''))
    return '\n'.join(out)


# What a fork of private memory costs: tools/bench/cost's figures.

# The pte-batching series (Linux 6.9, David Hildenbrand, "mm/memory:
# optimize fork() with PTE-mapped THP", cover letter v3,
# lore.kernel.org/r/20240129124649.189745-1-david@redhat.com): fork() with
# 1 GiB of PTE-mapped folios, Xeon Silver 4210R, before -> after.
BATCHING_4K = (0.014328, 0.014035)
BATCHING_64K = (0.014046, 0.010444)
# On-demand-fork (EuroSys 2021): "For processes with 1 GB of allocated
# memory, On-demand-fork has a 65x performance advantage over Fork."
ODF_RATIO = 65


def private_lines(name, cost):
    """The private table's summary line of one target."""
    ps = costs.private_summary(cost)
    parts = ['%s %.2f ms/100 MiB' % (b, ps[b]['slope']) for b in costs.BACKINGS if b in ps]
    top = max(m for _, m in cost['private'])
    ratios = []
    for b in costs.BACKINGS[1:]:
        if b in ps and top in ps[b]['rows'] and top in ps['4k']['rows']:
            ratios.append('4k/%s %.1fx' % (b, costs.median(ps['4k']['rows'][top]['ms']) /
                                           costs.median(ps[b]['rows'][top]['ms'])))
    return ('bench: %s private: fork time %s%s'
            % (name, ', '.join(parts),
               ('; at %d MiB %s' % (top, ', '.join(ratios))) if ratios else ''))


def tradeoff_words(be):
    if be['measured'] is not None:
        lo, hi = be['resolved']['lazy_up_to'], be['resolved']['always_from']
        return 'break-even at f = %.2g (lazy measurably cheaper %s, measurably dearer %s)' % (
            be['measured'], 'up to f = %g' % lo if lo is not None else 'nowhere',
            'from f = %g' % hi if hi is not None else 'nowhere')
    if be['lazy_first']:
        return ('lazy cheaper at every fraction%s'
                % (' (the straight line through the differences crosses at f = %.1f)'
                   % be['line'] if be['line'] and be['line'] > 0 else ''))
    return 'always cheaper at every fraction'


def tradeoff_line(name, cost):
    return 'bench: %s trade-off, %d MiB: %s' % (
        name, costs.break_even(cost, 'shm')['mib'],
        '; '.join('%s %s' % (m, tradeoff_words(costs.break_even(cost, m)))
                  for m in costs.MAPPINGS))


def us(ms_):
    return '%.2f' % (ms_ * 1000)


def ns(ms_):
    return '%.1f' % (ms_ * 1e6)


def model_line(name, model, floor_ns):
    return ('bench: %s model: fork = %s us + %s us/vma + %s ns/pte%s%s; fault %s us '
            '(r2 %.3f, %.3f); pte floor %.1f ns'
            % (name, us(model['fixed_ms']), us(model['vma_ms']), ns(model['pte_ms']),
               (' + %s ns/pmd' % ns(model['pmd_ms'])) if model['pmd_ms'] is not None else '',
               (' + %s ns/hugetlb pte' % ns(model['hugetlb_ms']))
               if model['hugetlb_ms'] is not None else '',
               us(model['fault_ms']), model['r2'], model['fault_r2'], floor_ns))


def cost_plots(tmp, cost_of):
    """private-time: fork time against private memory per backing;
    tradeoff: fork + the child's reads against the fraction it reads."""
    colors = {'4k': '#c0392b', '64k': '#d68910', 'thp': '#2471a3', 'hugetlb': '#229954',
              'always': '#c0392b', 'lazy': '#229954'}
    for t, cost in cost_of.items():
        ps = costs.private_summary(cost)
        for b, s in ps.items():
            with open(os.path.join(tmp, 'private-%s-%s.dat' % (t, b)), 'w') as f:
                for m, lo, med, hi in s['pts']:
                    f.write('%d %.4f %.4f %.4f\n' % (m, med, lo, hi))
        for m in costs.MAPPINGS:
            be = costs.break_even(cost, m)
            for pol in ('always', 'lazy'):
                with open(os.path.join(tmp, 'tradeoff-%s-%s-%s.dat' % (t, m, pol)), 'w') as f:
                    for r in be['rows']:
                        v = r['%s_all' % pol]
                        f.write('%.4f %.4f %.4f %.4f\n' % (r['f'], r[pol], min(v), max(v)))
    top = max(max(m for _, m in c['private']) for c in cost_of.values())
    for term, ext in (('pngcairo noenhanced font ",10"', 'png'),
                      ('svg dynamic noenhanced font ",11"', 'svg')):
        lines = ['set terminal %s size %d,480' % (term, 500 * len(cost_of)),
                 "set output 'private-time.%s'" % ext,
                 'set multiplot layout 1,%d title "fork() time against private anonymous '
                 'memory the parent wrote, by backing (median; bars: min..max)"' % len(cost_of),
                 'set xlabel "private memory (MiB)"', 'set ylabel "fork() time (ms)"',
                 'set key top left', 'set grid', 'set xrange [-%d:%d]' % (top // 25, top * 1.04),
                 'set yrange [0:*]']
        for t in cost_of:
            plots_ = ["'private-%s-%s.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.6 "
                      "lc rgb '%s' title '%s'" % (t, b, colors[b], costs.BACKING_NAMES[b])
                      for b in costs.BACKINGS
                      if os.path.exists(os.path.join(tmp, 'private-%s-%s.dat' % (t, b)))]
            lines += ['set title %s' % gp_quote(guest_title(t)), 'plot ' + ', '.join(plots_)]
        lines.append('unset multiplot')
        with open(os.path.join(tmp, 'private-time-%s.gp' % ext), 'w') as f:
            f.write('\n'.join(lines) + '\n')
        n = len(cost_of) * len(costs.MAPPINGS)
        lines = ['set terminal %s size %d,460' % (term, 420 * n),
                 "set output 'tradeoff.%s'" % ext,
                 'set multiplot layout 1,%d title "fork() + the child reading a fraction of '
                 'a mapping lazy copy skips + its exit: always against lazy (median; bars: '
                 'min..max)"' % n,
                 'set xlabel "fraction of the mapping the child reads"',
                 'set ylabel "fork + reads + exit (ms)"', 'set key top left', 'set grid',
                 'set xrange [-0.05:1.05]', 'set yrange [0:*]']
        for t in cost_of:
            for m in costs.MAPPINGS:
                plots_ = ["'tradeoff-%s-%s-%s.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 "
                          "ps 0.6 lc rgb '%s' title '%s'" % (t, m, pol, colors[pol], pol)
                          for pol in ('always', 'lazy')]
                lines += ['set title %s' % gp_quote("%s: %s" % (guest_title(t),
                                                                 costs.MAPPING_NAMES[m])),
                          'plot ' + ', '.join(plots_)]
        lines.append('unset multiplot')
        with open(os.path.join(tmp, 'tradeoff-%s.gp' % ext), 'w') as f:
            f.write('\n'.join(lines) + '\n')


def kernels_section(cost_of, test_of):
    """The instrumentation's cost: the same private 4k forks on the test
    kernel against the bench kernel."""
    out = ['| target | private 4k | bench kernel: median ms (min..max) | test kernel | '
           'test / bench | min..max ranges |', '|---|---:|---:|---:|---:|---|']
    for t in cost_of:
        for (b, mib), tr in sorted(test_of[t]['private'].items()):
            br = cost_of[t]['private'].get((b, mib))
            if not br:
                raise BenchError('%s: the test kernel ran private %s at %d MiB, the bench '
                                 'kernel did not' % (t, b, mib))
            bm, tm = costs.median(br['ms']), costs.median(tr['ms'])
            apart = min(tr['ms']) > max(br['ms']) or max(tr['ms']) < min(br['ms'])
            out.append('| %s | %d MiB | %s (%s..%s) | %s (%s..%s) | %.2fx | %s |'
                       % (t, mib, ms(bm), ms(min(br['ms'])), ms(max(br['ms'])), ms(tm),
                          ms(min(tr['ms'])), ms(max(tr['ms'])), tm / bm,
                          'apart' if apart else 'overlap: within noise'))
    return '\n'.join(out)


def private_section(t, cost):
    ps = costs.private_summary(cost)
    out = ['| backing | MiB | fork: median ms | min | max | ptes / fork | pmds / fork | '
           'hugetlb ptes / fork | child: pages present | child: write it all, ms | '
           'child: faults |',
           '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for b in costs.BACKINGS:
        if b not in ps:
            continue
        for m, r in sorted(ps[b]['rows'].items()):
            out.append('| %s | %d | %s | %s | %s | %d | %d | %d | %d | %s | %d |'
                       % (b, m, ms(costs.median(r['ms'])), ms(min(r['ms'])), ms(max(r['ms'])),
                          r['ptes'], r['pmds'], r['hugetlb_ptes'], r['present'],
                          ms(r['write_ms']), r['write_faults']))
    out.append('')
    top = max(m for _, m in cost['private'])
    base0 = ps['4k']['rows'][min(ps['4k']['rows'])]
    for b in costs.BACKINGS:
        if b not in ps:
            why = cost['skipped'].get(b)
            if why:
                out.append('- %s: not in this guest: %s.' % (costs.BACKING_NAMES[b], why))
            continue
        s = ps[b]
        words = ('- %s: %.2f ms per 100 MiB (least squares over the medians, r\u00b2 %.3f); '
                 'the child\'s write of all of it %.1f ms per 100 MiB'
                 % (costs.BACKING_NAMES[b], s['slope'], s['r2'], s['write_slope']))
        if top in s['rows']:
            at_top = costs.median(s['rows'][top]['ms'])
            at_0 = costs.median(base0['ms'])
            words += ('; at %d MiB a fork takes %s ms, %.1fx a fork at %d MiB'
                      % (top, ms(at_top), at_top / at_0, min(ps['4k']['rows'])))
            if b != '4k' and top in ps['4k']['rows']:
                words += (', and 4 KiB folios take %.2fx as long'
                          % (costs.median(ps['4k']['rows'][top]['ms']) / at_top))
        out.append(words + '.')
    return '\n'.join(out)


def private_comparison(cost_of):
    """The published figures against ours, at 1 GiB where we have it."""
    out = []
    hb = (1 - BATCHING_64K[1] / BATCHING_64K[0]) * 100
    out.append('- The pte-batching series (6.9) measured fork() with 1 GiB of 64 KiB folios at '
               '%.6f s before and %.6f s after on a Xeon Silver 4210R (-%.0f%%), 4 KiB folios '
               'at %.6f and %.6f: after it, 4 KiB folios take %.2fx as long as 64 KiB ones.'
               % (BATCHING_64K[0], BATCHING_64K[1], hb, BATCHING_4K[0], BATCHING_4K[1],
                  BATCHING_4K[1] / BATCHING_64K[1]))
    for t, cost in cost_of.items():
        ps = costs.private_summary(cost)
        top = max(m for _, m in cost['private'])
        if '64k' in ps and top in ps['64k']['rows']:
            out.append('  %s, %d MiB: 4 KiB folios take %.2fx as long as 64 KiB ones.'
                       % (t, top, costs.median(ps['4k']['rows'][top]['ms']) /
                          costs.median(ps['64k']['rows'][top]['ms'])))
        else:
            out.append('  %s: no 64 KiB mTHP in this guest: nothing to compare.' % t)
    out.append('- On-demand-fork (EuroSys 2021) claims %dx over fork() for a process with '
               '1 GB allocated; it shares the page tables at fork and copies a table on the '
               'first write, so its fork still does some work per 2 MiB. How much each backing '
               'grows, as its fork at the largest size against its own fork at 0 MiB (noisy '
               'baselines: a fork at 0 MiB is a fraction of a ms), and 4 KiB folios against a '
               'PMD THP, the copy of one entry per 2 MiB, the closest thing here to what '
               'On-demand-fork does:' % ODF_RATIO)
    for t, cost in cost_of.items():
        ps = costs.private_summary(cost)
        top = max(m for _, m in cost['private'])
        parts = ['%s %.1fx' % (b, costs.median(ps[b]['rows'][top]['ms']) /
                                costs.median(ps[b]['rows'][min(ps[b]['rows'])]['ms']))
                 for b in costs.BACKINGS if b in ps and top in ps[b]['rows']]
        if 'thp' in ps and top in ps['thp']['rows']:
            parts.append('4k against thp %.1fx' % (
                costs.median(ps['4k']['rows'][top]['ms']) /
                costs.median(ps['thp']['rows'][top]['ms'])))
        out.append('  %s, %d MiB: %s.' % (t, top, ', '.join(parts)))
    return '\n'.join(out)


def tradeoff_section(t, cost):
    out = []
    for m in costs.MAPPINGS:
        be = costs.break_even(cost, m)
        out.append('%s, %s, %d MiB: %s.\n' % (t, costs.MAPPING_NAMES[m], be['mib'],
                                              tradeoff_words(be)))
        out.append('| fraction read | always: fork ms | reads | exit | total | '
                   'lazy: fork ms | reads | exit | total | lazy: faults | '
                   'lazy - always |')
        out.append('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for r in be['rows']:
            out.append('| %d/16 | %s | %s | %s | %s | %s | %s | %s | %s | %d | %+.2f |'
                       % (r['sixteenths'], ms(r['always_fork']), ms(r['always_touch']),
                          ms(r['always_exit']), ms(r['always']), ms(r['lazy_fork']),
                          ms(r['lazy_touch']), ms(r['lazy_exit']), ms(r['lazy']),
                          r['faults'], r['lazy'] - r['always']))
        out.append('')
    return '\n'.join(out)


def model_section(model_of, floor_of, host_bw, shm_summ):
    out = ['| target | fixed per fork | per vma | per pte copied | per pmd copied | per '
           'hugetlb pte copied | r\u00b2 (forks) | per fault after fork | per page read | '
           'r\u00b2 (children) | pte floor |',
           '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']

    def opt(v):
        return (ns(v) + ' ns') if v is not None else 'n/a'
    for t, md in model_of.items():
        out.append('| %s | %s us | %s us | %s ns | %s | %s | %.3f (%d runs) | %s us | %s ns | '
                   '%.3f (%d) | %.1f ns |'
                   % (t, us(md['fixed_ms']), us(md['vma_ms']), ns(md['pte_ms']),
                      opt(md['pmd_ms']), opt(md['hugetlb_ms']),
                      md['r2'], md['n'], us(md['fault_ms']), ns(md['page_read_ms']),
                      md['fault_r2'], md['fault_n'], floor_of[t]))
    out.append('')
    pages = 100 * (1 << 20) // costs.PAGE
    for t, md in model_of.items():
        out.append('- %s: for Ray\'s table the model predicts %.2f ms per 100 MiB of touched '
                   'shm under `always` (%d ptes; Ray, 2005: 23 ms per 100 MB; this run\'s '
                   'shm table: %.2f) and a fork of his process under `lazy` costing the '
                   'fixed part and its vmas, %.2f ms at any size (Ray: 1 ms). The measured '
                   'cost per copied pte is %.1fx the floor of %.1f ns that %d bytes of memory '
                   'traffic per pte (the pte read and written, the struct page\'s cache line '
                   'read and written for its refcount and mapcount) take at the guest\'s own '
                   'memcpy() bandwidth of %.1f GB/s (the host\'s: %.1f GB/s, a floor of %.1f '
                   'ns).'
                   % (t, md['pte_ms'] * pages, pages, shm_summ[t]['always']['slope'],
                      lazy_fork_ms(md), md['pte_ms'] * 1e6 / floor_of[t], floor_of[t],
                      costs.PTE_COPY_BYTES, costs.PTE_COPY_BYTES / floor_of[t], host_bw,
                      costs.PTE_COPY_BYTES / host_bw))
        out.append('  Ray\'s 23 ms per 100 MB is %.2f us per pte on 2005\'s hardware; the model '
                   'says %.3f us here (%s).'
                   % (23.0 / (100e6 / costs.PAGE) * 1000, md['pte_ms'] * 1000,
                      'UML: copied natively, but no hardware page tables'
                      if t == 'um' else 'TCG: emulated, not hardware\'s'
                      if ACCEL.get(t, 'TCG') == 'TCG' else 'KVM: the hardware\'s, virtualised'))
        small = md['smallest']
        out.append('  How well it fits: r\u00b2 is carried by the largest runs; at the smallest '
                   '4 KiB run (%d MiB) it predicts %s ms against %s measured.%s'
                   % (small['mib'], ms(small['predicted']), ms(small['measured']),
                      ' A coefficient below 0 (%s) is a column within the noise, not a '
                      'negative cost.' % ', '.join(k for k in ('pmd', 'hugetlb')
                                                    if (md[k + '_ms'] or 0) < 0)
                      if any((md[k + '_ms'] or 0) < 0 for k in ('pmd', 'hugetlb')) else ''))
        if md['pte_ms'] > 0:
            out.append('  "copy_page_range is more efficient than faulting": here one fault '
                       'after fork costs as much as copying %.0f ptes at fork. By the model '
                       'alone a lazy child comes out ahead while it faults on fewer than 1 in '
                       '%.0f of the pages fork would have copied; the model leaves out what '
                       'the child\'s exit frees (every pte `always` copied), so the measured '
                       'break-even above lies further out.'
                       % (md['fault_ms'] / md['pte_ms'], md['fault_ms'] / md['pte_ms']))
    return '\n'.join(out)


def lazy_fork_ms(md):
    """A fork skipping the memory: the fixed part and the vmas of
    forkcost's own process (its 0 MiB run)."""
    return md['fixed_ms'] + md['vma_ms'] * md.get('base_vmas', 0)


def kbuild_ci(kruns):
    ci = costs.paired_ci(kruns, 'minflt')
    if ci['lo_pct'] is None:
        return ci, ('one round only: no interval (BENCH_RUNS=2 or more gives one)')
    excl = ci['lo_pct'] > 0 or ci['hi_pct'] < 0
    return ci, ('lazy against always, round by round: %+.2f%% minor faults, 95%% confidence '
                'interval %+.2f%% .. %+.2f%% over %d rounds (t interval of the paired '
                'differences), which %s 0'
                % (ci['mean_pct'], ci['lo_pct'], ci['hi_pct'], ci['n'],
                   'excludes' if excl else 'includes'))


if __name__ == '__main__':
    sys.exit(main())
