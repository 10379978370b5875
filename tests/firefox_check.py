#!/usr/bin/env python3
# Independent checker for Firefox Profiler "processed profile" files (versions 48..70).
#
# Written only from the Firefox Profiler's own format definitions, never from tagprof
# code. Source: firefox-devtools/profiler at commit df31314e1 (Fri Aug 21 12:50:57 2026 +0200):
#   src/types/profile.ts       RawThread, RawSamplesTable, RawStackTable, RawFrameTable, FuncTable,
#                              ResourceTable, NativeSymbolTable, RawMarkerTable, Lib, ProfileMeta,
#                              SourceTable, RawProfileSharedData, Profile
#   src/types/markers.ts       MarkerSchema, MarkerDisplayLocation, MarkerFormatType
#   src/types/gecko-profile.ts MarkerPhase;  src/app-logic/constants.ts PROCESSED_PROFILE_VERSION,
#                              INSTANT / INTERVAL / INTERVAL_START / INTERVAL_END
#   docs-developer/CHANGELOG-formats.md and src/profile-logic/processed-profile-versioning.ts
#   (what each version changed), src/types/{profile,markers}.js at 0ee66f9fa (the v48 types),
#   and the color names of src/utils/colors.ts.
#
# Usage: firefox_check.py FILE [--summary]     firefox_check.py --self-test
import copy
import gzip
import itertools
import json
import math
import sys

MIN_VERSION, MAX_VERSION = 48, 70
INSTANT, INTERVAL, INTERVAL_START, INTERVAL_END = 0, 1, 2, 3
# The CategoryColor type, plus the Gecko spellings that src/utils/colors.ts also renders
# (real Firefox profiles use 'darkgray' and 'lightgreen').
CATEGORY_COLORS = {'transparent', 'purple', 'green', 'orange', 'yellow', 'lightblue', 'blue',
                   'brown', 'magenta', 'red', 'lightred', 'darkgrey', 'grey',
                   'darkgray', 'gray', 'lightgreen'}


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def is_num(x):
    return (is_int(x) or isinstance(x, float)) and math.isfinite(x)


# Value kinds: a predicate and how to describe a value that fails it.
KINDS = {
    'num': (is_num, 'a finite number'),
    'num?': (lambda x: x is None or is_num(x), 'a finite number or null'),
    'pos': (lambda x: is_num(x) and x > 0, 'a positive number'),
    'int': (is_int, 'an integer'),
    'int?': (lambda x: x is None or is_int(x), 'an integer or null'),
    'uint': (lambda x: is_int(x) and x >= 0, 'a non-negative integer'),
    'addr': (lambda x: is_int(x) and x >= -1, 'an address or -1'),
    'bool': (lambda x: isinstance(x, bool), 'a boolean'),
    'str': (lambda x: isinstance(x, str), 'a string'),
    'str?': (lambda x: x is None or isinstance(x, str), 'a string or null'),
    'list': (lambda x: isinstance(x, list), 'a list'),
    'tid': (lambda x: is_int(x) or isinstance(x, str), 'a number or string'),
    'restype': (lambda x: is_int(x) and 0 <= x <= 5, 'a ResourceType (0..5)'),
    'phase': (lambda x: is_int(x) and x in (INSTANT, INTERVAL, INTERVAL_START, INTERVAL_END),
              'a phase 0..3'),
}
META_FIELDS = (('interval', 'pos'), ('startTime', 'num'), ('processType', 'num'),
               ('product', 'str'), ('stackwalk', (lambda x: x in (0, 1) and is_int(x), '0 or 1')),
               ('version', 'num'), ('markerSchema', 'list'))
THREAD_FIELDS = (('name', 'str'), ('processType', 'str'), ('processStartupTime', 'num'),
                 ('processShutdownTime', 'num?'), ('registerTime', 'num'),
                 ('unregisterTime', 'num?'), ('pausedRanges', 'list'), ('isMainThread', 'bool'),
                 ('pid', 'str'), ('tid', 'tid'))
LIB_FIELDS = (('arch', 'str'), ('name', 'str'), ('path', 'str'), ('debugName', 'str'),
              ('debugPath', 'str'), ('breakpadId', 'str'), ('codeId', 'str?'))
MARKER_COLUMNS = (('name', 'ref:strings'), ('category', 'ref:categories'),
                  ('startTime', 'num?'), ('endTime', 'num?'), ('phase', 'phase'))
OPTIONAL_SAMPLE_COLUMNS = ('responsiveness', 'eventDelay', 'threadCPUDelta', 'argumentValues')


def display_locations(v):
    return {'marker-chart', 'marker-table', 'timeline-overview', 'timeline-memory', 'timeline-ipc',
            'timeline-fileio', 'stack-chart'} | ({'timeline-network'} if v >= 69 else set())


def field_formats(v):
    # pid / tid / hexadecimal arrived without a processed-format bump: allowed in every version.
    return ({'url', 'file-path', 'string', 'unique-string', 'duration', 'time', 'seconds',
             'milliseconds', 'microseconds', 'nanoseconds', 'bytes', 'percentage', 'integer',
             'decimal', 'list', 'pid', 'tid', 'hexadecimal'}
            | ({'sanitized-string'} if v >= 49 else set())
            | ({'flow-id', 'terminating-flow-id'} if v >= 51 else set()))


def table_specs(v):
    """Columns of the stack-related tables in version v, each mapped to its value kind.
    'ref:T' indexes table T; 'ref?:T' also allows null; 'ref-1:T' also allows -1."""
    stack = {'frame': 'ref:frameTable'}
    if v >= 66:
        stack['prefixOffset'] = 'int'            # v66: parent = i - prefixOffset[i], 0 = root
    else:
        stack['prefix'] = 'int?'
    if v < 53:                                   # v53 made stack categories derived data
        stack.update(category='ref:categories', subcategory='int')
    frame = {'address': 'addr', 'inlineDepth': 'uint', 'category': 'ref?:categories',
             'subcategory': 'int?', 'func': 'ref:funcTable', 'nativeSymbol': 'ref?:nativeSymbols',
             'innerWindowID': 'num?', 'line': 'num?', 'column': 'num?'}
    func = {'name': 'ref:strings', 'isJS': 'bool', 'relevantForJS': 'bool',
            'resource': 'ref-1:resourceTable', 'lineNumber': 'num?', 'columnNumber': 'num?'}
    if v < 54:
        frame['implementation'] = 'ref?:strings'  # removed in v54
    if v < 58:
        func['fileName'] = 'ref?:strings'
    else:
        func['source'] = 'ref?:sources'            # v58 replaced fileName
    if v >= 64:
        frame['originalLocation'] = func['originalLocation'] = 'ref?:sourceLocationTable'
    resource = {'name': 'ref:strings', 'host': 'ref?:strings', 'type': 'restype'}
    if v < 70:
        resource['lib'] = 'ref?:libs'
    else:
        frame['lib'] = 'ref-1:libs'                # v70 moved lib from resources to frames
    specs = {'stackTable': stack, 'frameTable': frame, 'funcTable': func, 'resourceTable': resource,
             'nativeSymbols': {'libIndex': 'ref:libs', 'address': 'uint', 'name': 'ref:strings',
                               'functionSize': 'num?'}}
    if v >= 58:
        specs['sources'] = {'id': 'str?', 'filename': 'ref:strings'}
        if v >= 61:
            specs['sources'].update(startLine='num', startColumn='num', sourceMapURL='ref?:strings')
        if v >= 64:
            specs['sources']['content'] = 'str?'
            specs['sourceLocationTable'] = {'source': 'ref:sources', 'line': 'num', 'column': 'num'}
    return specs


SHARED_ONLY = ('sources', 'sourceLocationTable')   # in profile.shared in every version with them


def value_problem(value, kind, lengths):
    """Why `value` is not allowed for this kind (see KINDS and table_specs), or None."""
    if isinstance(kind, str) and kind.startswith('ref'):
        mode, target = kind.split(':')
        if mode == 'ref?' and value is None:
            return None
        if mode == 'ref-1' and is_int(value) and value == -1:
            return None
        size = lengths.get(target)
        if not is_int(value) or value < 0 or (size is not None and value >= size):
            return f'{value!r} is out of range for {target} (length {size})'
        return None
    ok, what = KINDS[kind] if isinstance(kind, str) else kind
    try:
        good = ok(value)
    except TypeError:   # e.g. a list where a string was expected: `in` needs hashable values
        good = False
    return None if good else f'{value!r} is not {what}'


class Checker:
    def __init__(self, profile):
        self.profile = profile
        self.problems = []
        self.threads = []   # (tid, name, sample times, INTERVAL markers, marker count)
        self.v, self.subcats, self.schema_names = None, [], set()

    def bad(self, path, what):
        self.problems.append(f'{path}: {what}')

    def bad_rows(self, path, rows):
        """Report the first bad row of a column, and how many more there are."""
        if rows:
            more = f' (and {len(rows) - 1} more rows)' if len(rows) > 1 else ''
            self.bad(path, f'row {rows[0][0]}: {rows[0][1]}{more}')

    def need(self, obj, path, key, kind):
        """Check a required field; returns its value, or None when it is missing or wrong."""
        if not isinstance(obj, dict) or key not in obj:
            self.bad(f'{path}.{key}', 'missing (required)')
            return None
        why = value_problem(obj[key], kind, {})
        if why:
            self.bad(f'{path}.{key}', why)
        return None if why else obj[key]

    def need_all(self, obj, path, fields):
        for key, kind in fields:
            self.need(obj, path, key, kind)

    # ---- profile and meta ---------------------------------------------------
    def run(self):
        p = self.profile
        if not isinstance(p, dict) or not isinstance(p.get('meta'), dict):
            self.bad('meta', 'missing: this is not a processed profile')
            return self.problems
        v = p['meta'].get('preprocessedProfileVersion')
        if not is_int(v) or not MIN_VERSION <= v <= MAX_VERSION:
            self.bad('meta.preprocessedProfileVersion', f'version {v!r} is not supported '
                     f'(this checker knows {MIN_VERSION}..{MAX_VERSION})')
            return self.problems
        self.v = v
        self.check_meta(p['meta'])
        for i, lib in enumerate(self.need(p, 'profile', 'libs', 'list') or []):
            self.need_all(lib, f'libs[{i}]', LIB_FIELDS)
        shared = p.get('shared')
        if v >= 56 and not isinstance(shared, dict):           # profile.shared arrived in v56
            self.bad('shared', 'missing (required since version 56)')
        threads = self.need(p, 'profile', 'threads', 'list')
        if threads is not None:
            self.check_stack_data(threads, shared if isinstance(shared, dict) else {})
        return self.problems

    def check_meta(self, meta):
        v = self.v
        self.need_all(meta, 'meta', META_FIELDS)
        if meta.get('sampleUnits') is not None:                # optional
            times = ('ms', 'bytes') if v >= 54 else ('ms',)     # 'bytes' since v54
            self.need_all(meta['sampleUnits'], 'meta.sampleUnits', (
                ('time', (lambda x: x in times, f'one of {times}')),
                ('eventDelay', (lambda x: x == 'ms', "'ms'")),
                ('threadCPUDelta', (lambda x: x in ('ns', 'µs', 'variable CPU cycles'),
                                    'a ThreadCPUDeltaUnit'))))
        # `categories?` is optional in the type, but frames index into it and the v53 changelog
        # requires a grey default category and a default first subcategory in every category.
        cats = self.need(meta, 'meta', 'categories',
                         (lambda x: isinstance(x, list) and x, 'a non-empty list')) or []
        for i, cat in enumerate(cats):
            self.need_all(cat, f'meta.categories[{i}]', (
                ('name', 'str'), ('color', (lambda x: x in CATEGORY_COLORS, 'a CategoryColor')),
                ('subcategories', (lambda x: isinstance(x, list) and x and all(
                    isinstance(s, str) for s in x), 'a non-empty list of strings'))))
            subs = cat.get('subcategories') if isinstance(cat, dict) else None
            self.subcats.append(subs if isinstance(subs, list) else [])
        if cats and not any(isinstance(c, dict) and c.get('color') == 'grey' for c in cats):
            self.bad('meta.categories', 'no category has color "grey" (the default category)')
        self.check_marker_schemas(meta.get('markerSchema'))

    def check_marker_schemas(self, schemas):
        v = self.v
        fields_key = 'fields' if v >= 55 else 'data'          # renamed in v55
        for i, schema in enumerate(schemas if isinstance(schemas, list) else []):
            path = f'meta.markerSchema[{i}]'
            name = self.need(schema, path, 'name', 'str')
            if name in self.schema_names:
                self.bad(f'{path}.name', f'duplicate schema name {name!r}')
            self.schema_names.add(name)
            locations = display_locations(v)
            self.need(schema, path, 'display',
                      (lambda x: isinstance(x, list) and set(x) <= locations,
                       f'a list of display locations of version {v}'))
            for j, field in enumerate(self.need(schema, path, fields_key, 'list') or []):
                if v < 55 and isinstance(field, dict) and 'value' in field:
                    continue                                     # static field, allowed before v55
                self.need_all(field, f'{path}.{fields_key}[{j}]', (
                    ('key', 'str'), ('format', (self.format_ok, f'a field format of version {v}'))))

    def format_ok(self, fmt):
        if isinstance(fmt, dict):
            return fmt.get('type') == 'table' and isinstance(fmt.get('columns'), list)
        return fmt in field_formats(self.v)

    # ---- stack tables -------------------------------------------------------
    def check_stack_data(self, threads, shared):
        """Check the stack tables (in profile.shared or per thread, by version), then threads."""
        v, specs = self.v, table_specs(self.v)
        strings = self.need(shared, 'shared', 'stringArray', 'list') if v >= 56 else None
        shared_tables = {n: self.table_at(shared, 'shared', n) for n in specs
                         if v >= 60 or n in SHARED_ONLY}        # v60 moved the tables to shared
        self.check_tables(shared_tables, shared_tables, strings, specs)
        for i, thread in enumerate(threads):
            path = f'threads[{i}]'
            if not isinstance(thread, dict):
                self.bad(path, 'not an object')
                continue
            for name in list(shared_tables) + (['stringArray'] if v >= 56 else []):
                if name in thread:
                    self.bad(f'{path}.{name}', f'belongs in profile.shared in version {v}')
            if v < 56:
                strings = self.need(thread, path, 'stringArray', 'list')
            own = {n: self.table_at(thread, path, n) for n in specs if n not in shared_tables}
            tables = {**shared_tables, **own}
            self.check_tables(own, tables, strings, specs)
            self.check_thread(path, thread, tables, strings or [])

    def table_at(self, owner, owner_path, name):
        """(path, table) of a required table; table is None when it is unusable."""
        path, table = f'{owner_path}.{name}', owner.get(name)
        if not isinstance(table, dict):
            self.bad(path, f'missing (required in version {self.v})')
            return path, None
        if self.need(table, path, 'length', 'uint') is None:
            return path, None
        return path, table

    def check_tables(self, to_check, tables, strings, specs):
        libs = self.profile.get('libs')
        lengths = {n: t['length'] if t else None for n, (_, t) in tables.items()}
        lengths.update(strings=len(strings) if isinstance(strings, list) else None,
                       libs=len(libs) if isinstance(libs, list) else None,
                       categories=len(self.subcats))
        for name, (path, table) in to_check.items():
            if table is not None:
                spec = dict(specs[name])
                if name == 'sources' and self.v < 61 and 'uuid' in table and 'id' not in table:
                    spec['uuid'] = spec.pop('id')            # renamed to id in v61
                self.check_table(path, table, spec, lengths)

    def check_table(self, path, table, spec, lengths):
        n = table['length']
        for col in table:
            if col != 'length' and col not in spec:
                self.bad(f'{path}.{col}', f'unexpected column (not part of version {self.v})')
        missing = [c for c in spec if not isinstance(table.get(c), list)]
        if missing:
            self.bad(path, f'missing columns {", ".join(missing)} (required in version {self.v})')
        wrong = [f'{c} ({len(table[c])})' for c in spec if c not in missing and len(table[c]) != n]
        if wrong:
            self.bad(path, f'length is {n} but these columns differ: {", ".join(wrong)}')
        if missing or wrong:
            return
        for col, kind in spec.items():
            self.check_column(path, table, col, n, kind, lengths)
        if 'subcategory' in spec:
            self.check_subcategories(path, table)
        self.check_stack_order(path, table)

    def check_column(self, path, table, col, n, kind, lengths):
        """Check one column of a table of length n; True if every value is fine."""
        values = table.get(col)
        if not isinstance(values, list) or len(values) != n:
            self.bad(f'{path}.{col}', f'must be a list of {n} values (the table length)')
            return False
        rows = [(i, why) for i, x in enumerate(values) if (why := value_problem(x, kind, lengths))]
        self.bad_rows(f'{path}.{col}', rows)
        return not rows

    def check_subcategories(self, path, table):
        """A frame with a category needs a subcategory from that category's list."""
        rows = []
        for i, (cat, sub) in enumerate(zip(table['category'], table['subcategory'])):
            if is_int(cat) and 0 <= cat < len(self.subcats):  # null, or reported already
                if not is_int(sub) or not 0 <= sub < len(self.subcats[cat]):
                    rows.append((i, f'subcategory {sub!r} is not one of the subcategories '
                                    f'of category {cat}'))
        self.bad_rows(f'{path}.subcategory', rows)

    def check_stack_order(self, path, table):
        """Parents come before children: a prefix is null or points to an earlier stack."""
        for col, parent in (('prefix', lambda i, p: p),
                            ('prefixOffset', lambda i, k: i - k if k else None)):   # 0 = root
            if col in table:
                rows = [(i, f'{col} {x} does not point to an earlier stack')
                        for i, x in enumerate(table[col])
                        if is_int(x) and parent(i, x) is not None and not 0 <= parent(i, x) < i]
                self.bad_rows(f'{path}.{col}', rows)

    # ---- threads, samples, markers -----------------------------------------
    def check_thread(self, path, thread, tables, strings):
        self.need_all(thread, path, THREAD_FIELDS)   # isMainThread since v46, string pid since v47
        if 'usedInnerWindowIDs' in thread and self.v < 59:
            self.bad(f'{path}.usedInnerWindowIDs', 'only exists since version 59')
        stacks = tables['stackTable'][1]
        lengths = {'strings': len(strings), 'categories': len(self.subcats),
                   'stackTable': stacks['length'] if stacks else None}
        times = self.check_samples(f'{path}.samples', thread.get('samples'), lengths)
        intervals = self.check_markers(f'{path}.markers', thread.get('markers'), lengths, strings)
        count = thread['markers'].get('length') if isinstance(thread.get('markers'), dict) else 0
        self.threads.append((thread.get('tid'), thread.get('name'), times, intervals, count))

    def check_samples(self, path, samples, lengths):
        """Check the samples table; returns the sample times (absolute ms)."""
        if not isinstance(samples, dict):
            self.bad(path, 'missing (required)')
            return []
        if self.need(samples, path, 'length', 'uint') is None:
            return []
        n = samples['length']
        self.check_column(path, samples, 'stack', n, 'ref?:stackTable', lengths)
        for col in OPTIONAL_SAMPLE_COLUMNS:
            if col in samples:
                self.check_column(path, samples, col, n, 'num?', lengths)
        self.need(samples, path, 'weightType', (lambda x: x in ('samples', 'tracing-ms', 'bytes'),
                                                'a WeightType'))
        if samples.get('weight') is not None:         # "optional weight array": null means 1 each
            self.check_column(path, samples, 'weight', n, 'num', lengths)
        has_time, has_deltas = 'time' in samples, 'timeDeltas' in samples
        if has_deltas and self.v < 50:
            self.bad(f'{path}.timeDeltas', 'only exists since version 50')
        if has_time == has_deltas:
            self.bad(path, 'needs exactly one of `time` and `timeDeltas`')
            return []
        col = 'time' if has_time else 'timeDeltas'
        if not self.check_column(path, samples, col, n, 'num', lengths):
            return []
        times = samples['time'] if has_time else list(itertools.accumulate(samples['timeDeltas']))
        self.bad_rows(f'{path}.{col}', [
            (i, f'time {times[i]} is before the previous {times[i - 1]} (must not decrease)')
            for i in range(1, n) if times[i] < times[i - 1]])
        return times

    def check_markers(self, path, markers, lengths, strings):
        """Check the marker table; returns (name, start, end) of its INTERVAL markers."""
        if not isinstance(markers, dict):
            self.bad(path, 'missing (required)')
            return []
        if self.need(markers, path, 'length', 'uint') is None:
            return []
        n = markers['length']
        usable = [self.check_column(path, markers, col, n, kind, lengths)
                  for col, kind in MARKER_COLUMNS]
        data = markers.get('data')
        if not isinstance(data, list) or len(data) != n:
            self.bad(f'{path}.data', f'must be a list of {n} values (the table length)')
            return []
        if not all(usable):
            return []
        rows, intervals = {'startTime': [], 'endTime': [], 'data': []}, []
        for i, (phase, start, end) in enumerate(zip(markers['phase'], markers['startTime'],
                                                    markers['endTime'])):
            # Which of the two times is meaningful depends on the phase (v68 changelog).
            if phase != INTERVAL_END and start is None:
                rows['startTime'].append((i, f'phase {phase} needs a startTime'))
            if phase in (INTERVAL, INTERVAL_END) and end is None:
                rows['endTime'].append((i, f'phase {phase} needs an endTime'))
            if phase == INTERVAL and start is not None and end is not None:
                if start > end:
                    rows['startTime'].append((i, f'startTime {start} is after endTime {end}'))
                name = markers['name'][i]
                intervals.append((strings[name] if name < len(strings) else f'#{name}', start, end))
            why = self.payload_problem(data[i], lengths)
            if why:
                rows['data'].append((i, why))
        for col, found in rows.items():
            self.bad_rows(f'{path}.{col}', found)
        return intervals

    def payload_problem(self, payload, lengths):
        """Marker data is null or an object; its `type` selects a schema (v52)."""
        if payload is None:
            return None
        if not isinstance(payload, dict):
            return 'marker data must be an object or null'
        kind = payload.get('type')
        if kind is not None and kind not in self.schema_names:
            return f'data.type {kind!r} has no schema in meta.markerSchema'
        cause = payload.get('cause')
        if isinstance(cause, dict) and cause.get('stack') is not None:
            return value_problem(cause['stack'], 'ref:stackTable', lengths)
        return None


# ---- command line ---------------------------------------------------------------
def parse_bytes(data):
    return json.loads(gzip.decompress(data) if data[:2] == b'\x1f\x8b' else data)


def summary_lines(checker):
    """One line per thread, then one line per INTERVAL marker, grouped by thread."""
    lines, marker_lines = [], []
    for tid, name, times, intervals, _ in checker.threads:
        first, last = (f'{times[0]:.3f}', f'{times[-1]:.3f}') if times else ('-', '-')
        lines.append(f'thread {tid} {name}: samples={len(times)} first_ms={first} last_ms={last}')
        marker_lines += [f'marker {tid} {m} {s:.3f} {e:.3f}' for m, s, e in intervals]
    return lines + marker_lines


def check_file(path, summary):
    try:
        with open(path, 'rb') as f:
            profile = parse_bytes(f.read())
    except Exception as e:   # unreadable, bad gzip, bad JSON: all mean "not a profile"
        print(f'{path}: cannot read as (gzipped) JSON: {e}')
        return 1
    checker = Checker(profile)
    problems = checker.run()
    for problem in problems[:20]:
        print(problem)
    if len(problems) > 20:
        print(f'... and {len(problems) - 20} more problems ({len(problems)} in total)')
    if problems:
        return 1
    samples, markers = sum(len(t[2]) for t in checker.threads), sum(t[4] for t in checker.threads)
    print(f'ok: {len(checker.threads)} threads, {samples} samples, {markers} markers '
          f'(version {checker.v})')
    if summary:
        print('\n'.join(summary_lines(checker)))
    return 0


# ---- self-test -------------------------------------------------------------------
def build_profile(v):
    """A small valid profile of version v, built from the type definitions."""
    stack = {'frame': [0, 1], 'length': 2}   # stack 1 = stack 0 -> frame 1
    if v >= 66:
        stack['prefixOffset'] = [0, 1]
    else:
        stack['prefix'] = [None, 0]
    if v < 53:
        stack.update(category=[1, 1], subcategory=[0, 1])
    frame = {'address': [-1, 4096], 'inlineDepth': [0, 0], 'category': [None, 1],
             'subcategory': [None, 1], 'func': [0, 1], 'nativeSymbol': [None, 0],
             'innerWindowID': [None, None], 'line': [3, None], 'column': [None, None], 'length': 2}
    func = {'name': [0, 1], 'isJS': [False, False], 'relevantForJS': [False, False],
            'resource': [-1, 0], 'lineNumber': [None, None], 'columnNumber': [None, None],
            ('fileName' if v < 58 else 'source'): [None, None], 'length': 2}
    resource = {'name': [2], 'host': [None], 'type': [1], 'length': 1}
    if v < 54:
        frame['implementation'] = [None, None]
    if v >= 64:
        frame['originalLocation'], func['originalLocation'] = [None, None], [None, None]
    if v >= 70:
        frame['lib'] = [-1, 0]
    else:
        resource['lib'] = [0]
    natives = {'libIndex': [0], 'address': [4096], 'name': [1], 'functionSize': [None], 'length': 1}
    tables = {'stackTable': stack, 'frameTable': frame, 'funcTable': func,
              'resourceTable': resource, 'nativeSymbols': natives}
    samples = {'stack': [0, 1, 1, None], 'weight': None, 'weightType': 'samples', 'length': 4}
    if v >= 50:
        samples['timeDeltas'] = [10.0, 1.0, 1.0, 1.0]
    else:
        samples['time'] = [10.0, 11.0, 12.0, 13.0]
    markers = {'data': [{'type': 'Phase', 'label': 'x'}, None], 'name': [3, 4],
               'startTime': [10.5, 12.0], 'endTime': [12.5, None], 'phase': [INTERVAL, INSTANT],
               'category': [1, 0], 'length': 2}
    thread = {'name': 'main', 'processType': 'default', 'processStartupTime': 0,
              'processShutdownTime': None, 'registerTime': 0, 'unregisterTime': None,
              'pausedRanges': [], 'isMainThread': True, 'pid': '42', 'tid': 42,
              'samples': samples, 'markers': markers}
    schema = {'name': 'Phase', 'display': ['marker-chart', 'marker-table'],
              ('fields' if v >= 55 else 'data'): [{'key': 'label', 'format': 'string'}]}
    meta = {'interval': 1.0, 'startTime': 1.7e12, 'processType': 0, 'product': 'self-test',
            'stackwalk': 1, 'version': 27, 'preprocessedProfileVersion': v,
            'markerSchema': [schema], 'sampleUnits': {'time': 'ms', 'eventDelay': 'ms',
                                                      'threadCPUDelta': 'ns'},
            'categories': [{'name': 'Other', 'color': 'grey', 'subcategories': ['Other']},
                           {'name': 'User', 'color': 'yellow', 'subcategories': ['Other', 'Hot']}]}
    lib = {'arch': 'x86_64', 'name': 'libwork.so', 'path': '/lib/libwork.so', 'codeId': None,
           'debugName': 'libwork.so', 'debugPath': '/lib/libwork.so', 'breakpadId': 'ABC0'}
    profile = {'meta': meta, 'libs': [lib], 'threads': [thread]}
    strings, shared = ['main', 'work', 'libwork.so', 'Phase', 'Tick'], {}
    (shared if v >= 56 else thread)['stringArray'] = strings
    if v >= 58:   # an empty sources table; its id column was called uuid before v61
        columns = (['id', 'filename', 'startLine', 'startColumn', 'sourceMapURL'] if v >= 61
                   else ['uuid', 'filename']) + (['content'] if v >= 64 else [])
        shared['sources'] = dict({c: [] for c in columns}, length=0)
    if v >= 64:
        shared['sourceLocationTable'] = {'source': [], 'line': [], 'column': [], 'length': 0}
    (shared if v >= 60 else thread).update(tables)
    if v >= 56:
        profile['shared'] = shared
    return profile


DELETE = object()   # corruption value meaning "remove this field"


def corrupt(obj, dotted, value):
    """Replace (or DELETE, or pass to a function) the value at a dotted path like 'a.0.b'."""
    *keys, last = [int(k) if k.isdigit() else k for k in dotted.split('.')]
    for key in keys:
        obj = obj[key]
    if callable(value):
        value(obj[last])
    elif value is DELETE:
        del obj[last]
    else:
        obj[last] = value


def prefix_not_earlier(stack):
    """Point stack 1 at a parent that is not an earlier stack, in either prefix column."""
    if 'prefixOffset' in stack:
        stack['prefixOffset'][1] = -1   # parent would be 1 - (-1) = 2, a later stack
    else:
        stack['prefix'][1] = 1          # its own parent


# (what; where: p = profile, t = owner of the stack tables, th = the thread; dotted path;
#  new value; text expected in one of the reported problems)
CORRUPTIONS = [
    ('table length mismatch', 't', 'frameTable.length', 3, 'length is 3 but'),
    ('stack frame out of range', 't', 'stackTable.frame.1', 9, 'out of range for frameTable'),
    ('prefix not pointing back', 't', 'stackTable', prefix_not_earlier, 'earlier stack'),
    ('sample times decrease', 'th', 'samples.timeDeltas.2', -5.0, 'must not decrease'),
    ('marker start > end', 'th', 'markers.startTime.0', 20.0, 'after endTime'),
    ('missing meta.interval', 'p', 'meta.interval', DELETE, 'meta.interval: missing'),
    ('unknown marker schema type', 'th', 'markers.data.0.type', 'Nope', 'no schema'),
    ('no grey category', 'p', 'meta.categories.0.color', 'darkgrey', '"grey"'),
    ('subcategory out of range', 't', 'frameTable.subcategory.1', 7, 'subcategories'),
    ('func name not a string index', 't', 'funcTable.name.1', 99, 'range for strings'),
    ('sample stack out of range', 'th', 'samples.stack.0', 5, 'range for stackTable'),
    ('numeric pid', 'th', 'pid', 42, 'pid: 42 is not a string'),
    ('missing isMainThread', 'th', 'isMainThread', DELETE, 'isMainThread: missing'),
    ('marker phase 4', 'th', 'markers.phase.1', 4, 'not a phase'),
    ('instant marker without start', 'th', 'markers.startTime.1', None, 'needs a startTime'),
    ('unknown display location', 'p', 'meta.markerSchema.0.display.0', 'sidebar', 'display'),
    ('column removed in v53', 't', 'stackTable.category', [1, 1], 'unexpected column'),
    ('schema fields under pre-v55 key', 'p', 'meta.markerSchema.0',
     lambda schema: schema.update(data=schema.pop('fields')), 'fields: missing'),
    ('version 47 refused', 'p', 'meta.preprocessedProfileVersion', 47, 'not supported'),
]


def self_test():
    results = []   # (test name, failure description or None)
    for v in range(MIN_VERSION, MAX_VERSION + 1):
        problems = Checker(build_profile(v)).run()
        results.append((f'valid v{v}', '; '.join(problems[:3]) or None))
    checker = Checker(parse_bytes(gzip.compress(json.dumps(build_profile(MAX_VERSION)).encode())))
    expected = ['thread 42 main: samples=4 first_ms=10.000 last_ms=13.000',
                'marker 42 Phase 10.500 12.500']
    ok = not checker.run() and summary_lines(checker) == expected
    results.append(('gzip input, --summary lines', None if ok else str(summary_lines(checker))))
    for v in (MAX_VERSION, 55):   # shared layout, per-thread layout
        base = build_profile(v)
        for what, where, path, value, expected in CORRUPTIONS:
            profile = copy.deepcopy(base)
            thread = profile['threads'][0]
            roots = {'p': profile, 'th': thread, 't': profile['shared'] if v >= 60 else thread}
            corrupt(roots[where], path, value)
            problems = Checker(profile).run()
            found = any(expected in problem for problem in problems)
            results.append((f'v{v} {what}', None if found else f'no {expected!r} in {problems}'))
    failed = [(name, why) for name, why in results if why]
    for name, why in failed:
        print(f'FAIL {name}: {why}')
    print(f'self-test: {len(results) - len(failed)} passed, {len(failed)} failed')
    return 1 if failed else 0


def main(argv):
    if argv == ['--self-test']:
        return self_test()
    files = [a for a in argv if a != '--summary']
    if len(files) != 1 or files[0].startswith('--'):
        print('usage: firefox_check.py FILE [--summary] | --self-test', file=sys.stderr)
        return 2
    return check_file(files[0], '--summary' in argv)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
