# Copyright 2026 The pcloud-plugin Authors
#
#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""SVG timelines for the dashboard, drawn on the server.

Standard library only: each function returns a string of SVG markup that
a template inserts with ``|safe``, so every text from outside goes through
_text or _attr (XML-escaped, characters XML forbids dropped). No
JavaScript: tooltips are <title> children and a click on an hour of the
availability chart follows a plain link. Times are naive UTC (aware ones
are converted); moments in data-* attributes are ISO minutes,
``YYYY-MM-DDTHH:MM``.
"""

import datetime
import math
import re
from urllib import parse
from xml.sax import saxutils

_DAY = datetime.timedelta(days=1)
_SIX_HOURS = datetime.timedelta(hours=6)
_WEEKDAYS = ('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun')
_MONTHS = ('Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep',
           'Oct', 'Nov', 'Dec')
# Code points XML 1.0 forbids even as references: one in a lease name
# would make the whole chart unparsable.
_NOT_XML = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')

GRID = '#e5e5e5'
AXIS = '#777777'
INK = '#333333'
FREE = '#5cb85c'
FULL = '#d9534f'
NOW = '#d9534f'
# Okabe-Ito colours: told apart with the common colour blindnesses.
KIND_COLOURS = {
    'pcloud': '#0072b2',
    'pcloud:host': '#009e73',
    'virtual:instance': '#e69f00',
}
OTHER_KIND = '#999999'
DEGRADED = '#cc0000'

# Availability chart geometry (px).
COLUMN = 6
MIN_WIDTH = 600
AV_HEIGHT = 220
AV_LEFT, AV_TOP, AV_BOTTOM = 40, 20, 28
# Room for half a tick label at the right end.
RIGHT = 16
DAY_LABEL = 66  # px a day label needs, with a gap
# Gantt geometry (px): 6 px an hour as the availability chart, within
# bounds so that a long window stays on a screen or two.
ROW = 20
BAR = 14
PX_PER_HOUR = 6
MAX_PLOT = 4320
LEGEND_HEIGHT, AXIS_HEIGHT = 22, 34
CHAR = 6.5  # mean width of a character at font-size 11
LABEL_MIN, LABEL_MAX = 60, 220

_STYLE = ('<style>.pcloud-hour:hover .pcloud-hit{fill:#000;'
          'fill-opacity:.08}</style>')
_HATCH = ('<defs><pattern id="pcloud-hatch" width="6" height="6" '
          'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
          '<rect width="3" height="6" fill="#fff" fill-opacity=".55"/>'
          '</pattern></defs>')


def _text(value):
    """``value`` as XML character data."""
    return saxutils.escape(_NOT_XML.sub('', str(value)))


def _attr(value):
    """``value`` as a double-quoted XML attribute value.

    What saxutils.quoteattr gives with always the same quote, several times
    faster: it runs for every bar.
    """
    return '"%s"' % _text(value).replace('"', '&quot;').replace(
        '\n', '&#10;').replace('\r', '&#13;').replace('\t', '&#9;')


def _n(value):
    """A coordinate, 0.1 px precise, without a trailing ``.0``."""
    return ('%.1f' % value).rstrip('0').rstrip('.')


def _utc(moment):
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def _iso(moment):
    # By hand: strftime is several times slower, and this runs per bar.
    return '%04d-%02d-%02dT%02d:%02d' % (
        moment.year, moment.month, moment.day, moment.hour, moment.minute)


def _day(moment):
    """``Mon 30 Nov``, in English whatever the process's locale."""
    return '%s %d %s' % (_WEEKDAYS[moment.weekday()], moment.day,
                         _MONTHS[moment.month - 1])


def _moment(moment):
    """``Mon 30 Nov 14:00``."""
    return '%s %02d:%02d' % (_day(moment), moment.hour, moment.minute)


def _time_axis(out, t0, t1, x0, px_per_second, lines, day_y, ticks,
               hour_y, grid):
    """Day separators and labels, six-hour ticks, for [t0, t1] from x0.

    ``lines`` and ``ticks`` are the (top, bottom) of the day separators
    and of the tick marks; ``grid`` draws light six-hour lines over
    ``lines`` too. Labels thin out where they would overlap; the first
    day is labelled at the left edge when its label fits there, none
    where it would run past the right end.
    """
    day_px = 86400 * px_per_second
    every = max(1, math.ceil(DAY_LABEL / day_px))  # label every n-th day
    first = datetime.datetime.combine(t0.date(), datetime.time())
    if first < t0:
        first += _DAY
    labelled = first
    while labelled.toordinal() % every:
        labelled += _DAY
    right = x0 + (t1 - t0).total_seconds() * px_per_second
    if x0 + DAY_LABEL <= right and (labelled > t1 or (
            labelled - t0).total_seconds() * px_per_second >= DAY_LABEL):
        out.append('<text x="%s" y="%d" fill="%s">%s</text>'
                   % (_n(x0 + 3), day_y, INK, _day(t0)))
    line = '<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="%s"/>'
    t = first
    while t <= t1:
        at = x0 + (t - t0).total_seconds() * px_per_second
        x = _n(at)
        named = t.toordinal() % every == 0
        if named or day_px >= 4:
            out.append(line % (x, x, lines[0], lines[1], AXIS))
        if named and at + DAY_LABEL <= right:
            out.append('<text x="%s" y="%d" dx="3" fill="%s">%s</text>'
                       % (x, day_y, INK, _day(t)))
        t += _DAY
    tick_px = 6 * 3600 * px_per_second
    if tick_px < 6:
        return
    label = '%02d:00' if tick_px >= 34 else '%02d' if tick_px >= 14 else ''
    t = first - _DAY
    while t < t0:
        t += _SIX_HOURS
    while t <= t1:
        x = _n(x0 + (t - t0).total_seconds() * px_per_second)
        if grid and t.hour:
            out.append(line % (x, x, lines[0], lines[1], GRID))
        out.append(line % (x, x, ticks[0], ticks[1], AXIS))
        if label:
            out.append('<text x="%s" y="%d" text-anchor="middle" '
                       'font-size="9" fill="%s">%s</text>'
                       % (x, hour_y, AXIS, label % t.hour))
        t += _SIX_HOURS


def _svg(width, height, body, extra=''):
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" '
            'viewBox="0 0 %s %s" font-family="sans-serif" font-size="11">'
            '%s%s</svg>' % (_n(width), height, _n(width), height, extra,
                            ''.join(body)))


def availability_svg(start, free, hosts, step=datetime.timedelta(hours=1),
                     booking_url=None, unit=('host', 'hosts'), out_of=True):
    """An SVG bar chart of the whole hosts free at each step from start.

    ``free[i]`` is the number free in [start + i*step, start + (i+1)*step)
    and ``hosts`` the y scale's top (a count above it, as any with hosts
    0, fills its column: the chart never draws past). One column per step,
    each ``<g class="pcloud-hour" data-start="2026-11-30T14:00"
    data-free="3">`` with a <title> (``Mon 30 Nov 14:00 UTC: 3 of 4 hosts
    free``), a transparent full-height hit rect (class pcloud-hit) and its
    bar (class pcloud-free, or pcloud-full: a thin red strip when none is
    free). With ``booking_url`` (a str.format string with ``{start}``,
    e.g. ``/project/pcloud/book/?start={start}``) each column's group is
    wrapped in an ``<a href>`` with {start} the column's start in ISO
    minutes, URL-quoted (``2026-11-30T14%3A00``). ``unit`` (singular,
    plural) names what is counted; without ``out_of`` there is no total
    to count out of (instance slots): ``hosts`` is only the scale's top
    and a title says ``5 slots free``.

    6 px a column, wider to fill at least 600 px; 220 px high.
    """
    if step <= datetime.timedelta(0):
        raise ValueError('step must be positive, not %s' % step)
    start = _utc(start)
    count = len(free)
    plot_w = max(COLUMN * count, MIN_WIDTH - AV_LEFT - RIGHT)
    column = plot_w / count if count else plot_w
    plot_h = AV_HEIGHT - AV_TOP - AV_BOTTOM
    base = AV_TOP + plot_h
    gap = 1 if column >= 4 else 0
    out = []
    for quarter in range(5):
        y = _n(base - plot_h * quarter / 4)
        out.append('<line x1="%d" x2="%s" y1="%s" y2="%s" stroke="%s"/>'
                   % (AV_LEFT, _n(AV_LEFT + plot_w), y, y,
                      AXIS if quarter == 0 else GRID))
    out.append('<text x="%d" y="%d" dx="-4" dy="4" text-anchor="end" '
               'fill="%s">0</text><text x="%d" y="%d" dx="-4" dy="4" '
               'text-anchor="end" fill="%s">%s</text>'
               % (AV_LEFT, base, INK, AV_LEFT, AV_TOP, INK, _text(hosts)))
    _time_axis(out, start, start + step * count, AV_LEFT,
               column / step.total_seconds(), (AV_TOP - 12, base),
               AV_TOP - 6, (base, base + 3), base + 13, grid=True)
    for i, n in enumerate(free):
        at = start + step * i
        iso = _iso(at)
        x = AV_LEFT + column * i
        if n > 0:
            ratio = min(n / hosts, 1) if hosts > 0 else 1
            bar_h = max(plot_h * ratio, 1)
            bar = ('<rect class="pcloud-free" x="%s" y="%s" width="%s" '
                   'height="%s" fill="%s"/>' % (
                       _n(x), _n(base - bar_h), _n(column - gap), _n(bar_h),
                       FREE))
        else:
            bar = ('<rect class="pcloud-full" x="%s" y="%d" width="%s" '
                   'height="3" fill="%s"/>'
                   % (_n(x), base - 3, _n(column - gap), FULL))
        if out_of:
            counted = '%s of %s %s' % (_text(n), _text(hosts),
                                       unit[hosts != 1])
        else:
            counted = '%s %s' % (_text(n), unit[n != 1])
        group = ('<g class="pcloud-hour" data-start="%s" data-free=%s>'
                 '<title>%s UTC: %s free</title>'
                 '<rect class="pcloud-hit" x="%s" y="%d" width="%s" '
                 'height="%d" fill="transparent"/>%s</g>'
                 % (iso, _attr(n), _moment(at), counted, _n(x), AV_TOP,
                    _n(column), plot_h, bar))
        if booking_url is not None:
            href = booking_url.format(start=parse.quote(iso, safe=''))
            group = '<a href=%s>%s</a>' % (_attr(href), group)
        out.append(group)
    if not count:
        out.append('<text x="%s" y="%d" text-anchor="middle" fill="%s">'
                   'No data</text>' % (_n(AV_LEFT + plot_w / 2),
                                       AV_TOP + plot_h // 2, AXIS))
    return _svg(AV_LEFT + plot_w + RIGHT, AV_HEIGHT, out, _STYLE)


def _legend(out):
    x = 4
    for name, colour, extra in (
            [(k, c, '') for k, c in KIND_COLOURS.items()] +
            [('other', OTHER_KIND, ''),
             ('healing', OTHER_KIND, 'hatch'),
             ('degraded', OTHER_KIND, 'border')]):
        out.append('<g class="pcloud-legend"><rect x="%d" y="5" width="12" '
                   'height="12" fill="%s"%s/>' % (
                       x, colour, ' stroke="%s" stroke-width="2"' % DEGRADED
                       if extra == 'border' else ''))
        if extra == 'hatch':
            out.append('<rect x="%d" y="5" width="12" height="12" '
                       'fill="url(#pcloud-hatch)"/>' % x)
        out.append('<text x="%d" y="15" fill="%s">%s</text></g>'
                   % (x + 16, INK, name))
        x += 16 + len(name) * CHAR + 14


def _bar_style(kind, mark):
    """(data-kind and data-mark, title's kind and mark, paint, hatched)."""
    attrs = 'data-kind=%s' % _attr(kind)
    about = _text(kind)
    paint = 'fill="%s"' % KIND_COLOURS.get(kind, OTHER_KIND)
    if mark is not None:
        attrs += ' data-mark=%s' % _attr(mark)
        about += ', ' + _text(mark)
        if mark != 'healing':
            paint += ' stroke="%s" stroke-width="2"' % DEGRADED
    return attrs, about, paint, mark == 'healing'


def gantt_svg(start, end, rows, now=None):
    """An SVG Gantt chart of [start, end): one row per host, bars on it.

    ``rows`` is [(host name, bars)], each bar a dict with 'start' and
    'end' (datetimes; None: began before the window, never ends), 'kind'
    ('pcloud', 'pcloud:host' or 'virtual:instance' have colours of their
    own, anything else is grey), 'text' and 'mark' ('healing': hatched,
    'degraded' or any other: red border; None: plain). Bars are clipped to
    the window; those wholly outside it are left out. Each is a
    ``<g class="pcloud-bar" data-kind data-host data-start data-end>``
    (data-mark too when marked) with a <title>; data-start and data-end
    are the bar's own moments, unclipped, in ISO minutes, or '' for a
    None start and 'forever' for a None end. A legend and the time axis
    on top; ``now``, when inside the window, a red vertical line.

    6 px an hour, the plot between 600 and 4320 px wide; 20 px a row.
    """
    start, end, now = _utc(start), _utc(end), _utc(now)
    if end <= start:
        raise ValueError('end (%s) must be after start (%s)' % (end, start))
    seconds = (end - start).total_seconds()
    plot_w = min(max(PX_PER_HOUR * seconds / 3600, MIN_WIDTH), MAX_PLOT)
    scale = plot_w / seconds
    longest = max((len(str(label)) for label, _bars in rows), default=0)
    label_w = min(max(longest * CHAR + 12, LABEL_MIN), LABEL_MAX)
    fits = int((label_w - 12) / CHAR)
    top = LEGEND_HEIGHT + AXIS_HEIGHT
    height = top + ROW * len(rows) + 4
    x0 = label_w
    out = []
    _legend(out)
    # Every other row shaded: one rect per pair, cheaper than per row.
    for r in range(1, len(rows), 2):
        out.append('<rect x="0" y="%d" width="%s" height="%d" fill="#f5f5f5"'
                   '/>' % (top + ROW * r, _n(x0 + plot_w), ROW))
    _time_axis(out, start, end, x0, scale, (LEGEND_HEIGHT + 4, height),
               LEGEND_HEIGHT + 14, (top - 3, top), top - 5, grid=False)
    window_start, window_end = start, end
    # Kinds and marks repeat over thousands of bars: escape each once.
    styles = {}
    for r, (label, bars) in enumerate(rows):
        y = top + ROW * r
        label = str(label)
        host = _attr(label)
        if len(label) > fits:
            out.append('<text x="%d" y="%d" text-anchor="end" fill="%s">'
                       '<title>%s</title>%s\u2026</text>'
                       % (x0 - 6, y + 14, INK, _text(label),
                          _text(label[:fits - 1])))
        else:
            out.append('<text x="%d" y="%d" text-anchor="end" fill="%s">'
                       '%s</text>' % (x0 - 6, y + 14, INK, _text(label)))
        for bar in bars:
            b_start, b_end = _utc(bar.get('start')), _utc(bar.get('end'))
            left = window_start if b_start is None or \
                b_start < window_start else b_start
            right = window_end if b_end is None or \
                b_end > window_end else b_end
            if right <= left:
                continue  # wholly outside the window
            key = (bar.get('kind') or '', bar.get('mark') or None)
            style = styles.get(key)
            if style is None:
                style = styles[key] = _bar_style(*key)
            attrs, about, paint, hatched = style
            x = _n(x0 + (left - window_start).total_seconds() * scale)
            w = _n(max((right - left).total_seconds() * scale, 1))
            out.append(
                '<g class="pcloud-bar" %s data-host=%s data-start="%s" '
                'data-end="%s"><title>%s (%s)\n%s \u2013 %s</title>'
                '<rect x="%s" y="%d" width="%s" height="%d" %s/>' % (
                    attrs, host, '' if b_start is None else _iso(b_start),
                    'forever' if b_end is None else _iso(b_end),
                    _text(bar.get('text') or ''), about,
                    'before the window' if b_start is None
                    else _moment(b_start),
                    'forever' if b_end is None else _moment(b_end) + ' UTC',
                    x, y + 3, w, BAR, paint))
            if hatched:
                out.append('<rect x="%s" y="%d" width="%s" height="%d" '
                           'fill="url(#pcloud-hatch)"/>' % (x, y + 3, w, BAR))
            out.append('</g>')
    if now is not None and start <= now <= end:
        x = _n(x0 + (now - start).total_seconds() * scale)
        out.append('<line class="pcloud-now" x1="%s" x2="%s" y1="%d" '
                   'y2="%d" stroke="%s" stroke-width="2"><title>now: %s UTC'
                   '</title></line>' % (x, x, LEGEND_HEIGHT + 4, height, NOW,
                                        _moment(now)))
    return _svg(x0 + plot_w + RIGHT, height, out, _HATCH)
