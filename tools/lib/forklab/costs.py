# SPDX-License-Identifier: GPL-2.0
"""forklab.costs: the figures of tools/bench/cost (forkcost.c), for
bench/report (forklab.bench_report): reading and checking them, the
private memory table, the trade-off's break-even, the cost model, and
kbuild's confidence interval. No output of its own: report renders what
these return.
"""

import statistics

PAGE = 4096
BACKINGS = ['4k', '64k', 'thp', 'hugetlb']
BACKING_NAMES = {'4k': '4 KiB folios', '64k': '64 KiB mTHP (pte-mapped)',
                 'thp': 'PMD THP (2 MiB)', 'hugetlb': 'hugetlb 2 MiB'}
MAPPINGS = ['shm', 'file']
MAPPING_NAMES = {'shm': 'SysV shm', 'file': 'MAP_PRIVATE tmpfs file'}
# A pte copy moves 8 bytes in and 8 out, and updates the page's refcount
# and mapcount: one struct page cache line (64 bytes) read and written.
PTE_COPY_BYTES = 8 + 8 + 64 + 64
# t(0.975, df), df = 1..20: two-sided 95% intervals of a mean.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]


class CostError(Exception):
    pass


def _kv(text, where):
    try:
        return dict(item.split('=', 1) for item in text.split())
    except ValueError:
        raise CostError('%s: not KEY=VALUE pairs: %r' % (where, text.strip())) from None


def _ints(f, keys, where):
    try:
        return {k: int(f[k]) for k in keys}
    except KeyError as e:
        raise CostError('%s: no %s= in a line' % (where, e.args[0])) from None
    except ValueError as e:
        raise CostError('%s: %s' % (where, e)) from None


def _us_list(f, key, n, where):
    try:
        v = [float(u) / 1000 for u in f[key].split(',')]
    except (KeyError, ValueError):
        raise CostError('%s: no list of %s= samples' % (where, key)) from None
    if len(v) != n:
        raise CostError('%s: %d %s samples for %d forks' % (where, len(v), key, n))
    return v


def read_cost(path):
    """forkcost's lines of one KTAP document: private, vmas, tradeoff,
    bandwidth; and the backings the guest skipped."""
    out = {'private': {}, 'vmas': {}, 'tradeoff': {}, 'bandwidth': None,
           'skipped': {}}
    with open(path) as f:
        for line in f:
            if line.startswith('not ok '):
                raise CostError('%s: forkcost failed a check: %s' % (path, line.strip()))
            if line.startswith('ok ') and ' # SKIP' in line:
                # "ok N BACKING, S MiB private anonymous memory # SKIP WHY"
                name, reason = line.split(' # SKIP', 1)
                out['skipped'][name.split()[2].rstrip(',')] = reason.strip()
                continue
            if not line.startswith('# ') or ': ' not in line:
                continue
            kind, rest = line[2:].split(': ', 1)
            if kind not in ('private', 'vmas', 'tradeoff', 'bandwidth'):
                continue
            f_ = _kv(rest, path)
            if kind == 'private':
                r = _ints(f_, ('mib', 'forks', 'ptes', 'pmds', 'hugetlb_ptes', 'present',
                               'vmas_all', 'ptes_all', 'pmds_all', 'write_faults'), path)
                # What fork copied in huge entries: pmds (the counter's)
                # and hugetlb ptes (the child's present pages / 512).
                r['huge'] = r['pmds'] + r['hugetlb_ptes']
                r['huge_all'] = r['pmds_all'] + r['hugetlb_ptes']
                r['ms'] = _us_list(f_, 'us', r['forks'], path)
                r['write_ms'] = float(f_.get('write_us', 'nan')) / 1000
                key = (f_.get('backing'), r['mib'])
                if key[0] not in BACKINGS:
                    raise CostError('%s: unknown backing in %r' % (path, line.strip()))
            elif kind == 'vmas':
                r = _ints(f_, ('count', 'forks', 'vmas', 'ptes', 'vmas_all', 'ptes_all',
                               'pmds_all'), path)
                r['huge_all'] = r['pmds_all']
                r['ms'] = _us_list(f_, 'us', r['forks'], path)
                key = r['count']
            elif kind == 'tradeoff':
                r = _ints(f_, ('mib', 'sixteenths', 'pages', 'touched', 'ptes', 'ptes_all',
                               'vmas_all', 'faults'), path)
                n = len(f_.get('fork_us', '').split(','))
                r['fork_ms'] = _us_list(f_, 'fork_us', n, path)
                r['touch_ms'] = _us_list(f_, 'touch_us', n, path)
                r['exit_ms'] = _us_list(f_, 'exit_us', n, path)
                r['total_ms'] = [a + b + c for a, b, c in
                                 zip(r['fork_ms'], r['touch_ms'], r['exit_ms'])]
                key = (f_.get('mapping'), f_.get('policy'), r['sixteenths'])
                if key[0] not in MAPPINGS or key[1] not in ('always', 'lazy'):
                    raise CostError('%s: unknown mapping or policy in %r' % (path, line.strip()))
            else:
                r = _ints(f_, ('mib', 'bytes'), path)
                r['ms'] = _us_list(f_, 'us', len(f_.get('us', '').split(',')), path)
                # bytes read and written per ns, over the median copy
                r['bytes_per_ns'] = r['bytes'] / (statistics.median(r['ms']) * 1e6)
                out['bandwidth'] = r
                continue
            if key in out[kind]:
                raise CostError('%s: %s %r twice' % (path, kind, key))
            out[kind][key] = r
    return out


def check_cost(target, cost, path, full=True):
    """The exact counts (forkcost checked them too; a file edited or cut
    short is caught here): the memory's share of each fork. Not full: a
    test kernel's file, private memory only."""
    priv = cost['private']
    if not any(b == '4k' for b, _ in priv):
        raise CostError('%s: no private 4k figures in %s: run tools/bench/cost %s'
                        % (target, path, target))
    for (b, mib), r in sorted(priv.items()):
        want = {'ptes': mib * 256 if b in ('4k', '64k') else 0,
                'pmds': mib // 2 if b == 'thp' else 0,
                'hugetlb_ptes': mib // 2 if b == 'hugetlb' else 0,
                'present': mib * 256}
        got = {k: r[k] for k in want}
        if got != want:
            raise CostError('%s: private %s at %d MiB: %s per fork, want %s'
                            % (target, b, mib,
                               ', '.join('%d %s' % (got[k], k) for k in want),
                               ', '.join('%d' % want[k] for k in want)))
    sizes = {b: sorted(m for b2, m in priv if b2 == b) for b in BACKINGS}
    for b in BACKINGS:
        if sizes[b] and len(sizes[b]) < 2:
            raise CostError('%s: private %s at one size only: a slope needs two' % (target, b))
    if not full:
        return sizes
    counts = sorted(cost['vmas'])
    if len(counts) < 2 or not counts[-1]:
        raise CostError('%s: one-page vmas at %s only: the cost model needs two counts, '
                        'one of them not 0' % (target, counts or 'no count'))
    for count, r in cost['vmas'].items():
        if r['vmas'] != count or r['ptes'] != count:
            raise CostError('%s: %d one-page vmas: %d vmas and %d ptes copied, want %d each'
                            % (target, count, r['vmas'], r['ptes'], count))
    for (m, p, six), r in cost['tradeoff'].items():
        want = r['pages'] if p == 'always' else 0
        if r['ptes'] != want:
            raise CostError('%s: trade-off, %s under %s: %d ptes of it copied, want %d'
                            % (target, m, p, r['ptes'], want))
    grid = {(m, p, six) for m in MAPPINGS for p in ('always', 'lazy')
            for six in (0, 1, 4, 8, 16)}
    if set(cost['tradeoff']) != grid:
        missing = sorted(grid - set(cost['tradeoff']))
        raise CostError('%s: the trade-off in %s lacks %s' % (
            target, path, ', '.join('%s %s %d/16' % k for k in missing) or
            'nothing but has more than mappings x policies x 0, 1, 4, 8, 16 sixteenths'))
    if not cost['bandwidth']:
        raise CostError('%s: no bandwidth figure in %s' % (target, path))
    return sizes


def median(v):
    return statistics.median(v)


def slope_per_100(points):
    """Least squares over (MiB, ms) points: (ms per 100 MiB, r2)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    coef, r2 = lstsq([[1.0, x] for x in xs], ys)
    return coef[1] * 100, r2


def lstsq(rows, ys):
    """Least squares y = rows . coef by the normal equations (a handful of
    columns, each scaled to at most 1 first: a pte count of 2.6e5 beside
    a constant would square into an ill-conditioned matrix): (coef, r2).
    A column that never varies beside the constant cannot be told apart:
    the caller leaves such columns out."""
    scale = [max(abs(r[i]) for r in rows) or 1.0 for i in range(len(rows[0]))]
    coef, r2 = _lstsq([[x / k for x, k in zip(r, scale)] for r in rows], ys)
    return [c / k for c, k in zip(coef, scale)], r2


def _lstsq(rows, ys):
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    for col in range(n):
        piv = max(range(col, n), key=lambda i: abs(a[i][col]))
        if abs(a[piv][col]) < 1e-9:
            raise CostError('the cost model\'s columns are not independent')
        a[col], a[piv] = a[piv], a[col]
        b[col], b[piv] = b[piv], b[col]
        for i in range(n):
            if i != col:
                k = a[i][col] / a[col][col]
                a[i] = [x - k * y for x, y in zip(a[i], a[col])]
                b[i] -= k * b[col]
    coef = [b[i] / a[i][i] for i in range(n)]
    my = sum(ys) / len(ys)
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - sum(c * x for c, x in zip(coef, r))) ** 2 for r, y in zip(rows, ys))
    return coef, (1 - ss_res / ss_tot) if ss_tot else 1.0


def private_summary(cost):
    """Per backing: slope per 100 MiB, and the points (MiB, min, median, max)."""
    out = {}
    for b in BACKINGS:
        rows = sorted((m, r) for (b2, m), r in cost['private'].items() if b2 == b)
        if len(rows) < 2:
            continue
        pts = [(m, min(r['ms']), median(r['ms']), max(r['ms'])) for m, r in rows]
        slope, r2 = slope_per_100([(m, med) for m, _, med, _ in pts])
        wslope, wr2 = slope_per_100([(m, r['write_ms']) for m, r in rows])
        out[b] = {'pts': pts, 'slope': slope, 'r2': r2, 'rows': dict(rows),
                  'write_slope': wslope, 'write_r2': wr2}
    return out


def cost_model(cost):
    """Least squares, over the median fork of every private and vmas run:
    fork ms = fixed + per vma x vmas + per pte x ptes + per pmd x pmds
    + per hugetlb pte x hugetlb ptes (the fork's totals: the counters',
    the program's own vmas included, and the child's count of hugetlb
    ptes). A column that never varies (UML has no pmds) is left out:
    None. 64 KiB mTHP is left out: its ptes are copied in batches,
    cheaper each. Per fault, over the trade-off's children:
    touch ms = fixed + per page read x pages + per fault x faults, over
    the lazy children only (an always child's faults, where it takes any,
    are UML's host faults, not the ones lazy copy moves): SysV shm faults
    once a page, a file once per 16 (fault-around), which sets the two
    columns apart."""
    runs = [r for (b, _), r in cost['private'].items() if b != '64k']
    runs += [dict(r, hugetlb_ptes=0) for r in cost['vmas'].values()]
    cols = ['vmas_all', 'ptes_all', 'pmds_all', 'hugetlb_ptes']
    used = [c for c in cols if c in cols[:2] or len({r[c] for r in runs}) > 1]
    coef, r2 = lstsq([[1.0] + [r[c] for c in used] for r in runs],
                     [median(r['ms']) for r in runs])
    got = dict(zip(used, coef[1:]))
    small = min((r for (b, _), r in cost['private'].items() if b == '4k'),
                key=lambda r: r['mib'])
    predicted = coef[0] + sum(got[c] * small[c] for c in used)
    model = {'fixed_ms': coef[0], 'vma_ms': got['vmas_all'], 'pte_ms': got['ptes_all'],
             'pmd_ms': got.get('pmds_all'), 'hugetlb_ms': got.get('hugetlb_ptes'),
             'r2': r2, 'n': len(runs),
             'smallest': {'mib': small['mib'], 'predicted': predicted,
                          'measured': median(small['ms'])}}
    trows, tys = [], []
    for (_, policy, _), r in cost['tradeoff'].items():
        if policy != 'lazy':
            continue
        trows.append([1.0, r['touched'], r['faults']])
        tys.append(median(r['touch_ms']))
    tcoef, tr2 = lstsq(trows, tys)
    model.update({'touch_fixed_ms': tcoef[0], 'page_read_ms': tcoef[1],
                  'fault_ms': tcoef[2], 'fault_r2': tr2, 'fault_n': len(tys)})
    return model


def break_even(cost, mapping):
    """The trade-off of one mapping: per fraction, the medians of fork +
    the child's reads under always and lazy; and the fraction where lazy
    stops being cheaper. Interpolated between the two fractions whose
    difference changes sign; none measured: the straight line through
    the differences says where it would be (None if never)."""
    fr = sorted({six for (m, _, six) in cost['tradeoff'] if m == mapping})
    rows = []
    for six in fr:
        a = cost['tradeoff'][(mapping, 'always', six)]
        lz = cost['tradeoff'][(mapping, 'lazy', six)]
        rows.append({'f': six / 16, 'sixteenths': six,
                     'always': median(a['total_ms']), 'lazy': median(lz['total_ms']),
                     'always_fork': median(a['fork_ms']), 'lazy_fork': median(lz['fork_ms']),
                     'always_touch': median(a['touch_ms']), 'lazy_touch': median(lz['touch_ms']),
                     'always_exit': median(a['exit_ms']), 'lazy_exit': median(lz['exit_ms']),
                     'faults': lz['faults'], 'touched': lz['touched'],
                     'always_all': a['total_ms'], 'lazy_all': lz['total_ms']})
    diffs = [(r['f'], r['lazy'] - r['always']) for r in rows]
    found, resolved = None, None
    for (f0, d0), (f1, d1) in zip(diffs, diffs[1:]):
        if d0 < 0 <= d1 or d0 > 0 >= d1:
            found = f0 + (f1 - f0) * (-d0) / (d1 - d0)
            break
    # Where the ranges say which is cheaper: -1 lazy (its slowest round
    # beat always's fastest), +1 always, 0 overlapping.
    for r in rows:
        r['apart'] = (-1 if max(r['lazy_all']) < min(r['always_all']) else
                      1 if min(r['lazy_all']) > max(r['always_all']) else 0)
    if found is not None:
        below = [r['f'] for r in rows if r['apart'] == -1 and r['f'] <= found]
        above = [r['f'] for r in rows if r['apart'] == 1 and r['f'] >= found]
        resolved = {'lazy_up_to': max(below) if below else None,
                    'always_from': min(above) if above else None}
    coef, _ = lstsq([[1.0, f] for f, _ in diffs], [d for _, d in diffs])
    line = -coef[0] / coef[1] if coef[1] else None
    return {'rows': rows, 'measured': found, 'resolved': resolved, 'line': line,
            'lazy_first': diffs[0][1] <= 0 if diffs else None,
            'mib': cost['tradeoff'][(mapping, 'lazy', fr[0])]['pages'] // 256}


def paired_ci(runs, key, a='always', b='lazy'):
    """Round by round, b's value minus a's: the mean difference in % of
    a's mean, and its 95% t interval (None with fewer than 2 rounds)."""
    by_run = {}
    for r in runs:
        by_run.setdefault(r['run'], {})[r['policy']] = r[key]
    pairs = [(v[a], v[b]) for v in by_run.values() if a in v and b in v]
    diffs = [y - x for x, y in pairs]
    base = statistics.mean(x for x, _ in pairs)
    mean = statistics.mean(diffs)
    if len(diffs) < 2:
        return {'n': len(diffs), 'mean_pct': 100 * mean / base, 'lo_pct': None,
                'hi_pct': None, 'mean': mean}
    half = T975[min(len(diffs) - 1, len(T975)) - 1] * statistics.stdev(diffs) / len(diffs) ** .5
    return {'n': len(diffs), 'mean': mean, 'half': half, 'mean_pct': 100 * mean / base,
            'lo_pct': 100 * (mean - half) / base, 'hi_pct': 100 * (mean + half) / base}
