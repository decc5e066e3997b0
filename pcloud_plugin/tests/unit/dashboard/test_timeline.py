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

"""dashboard.timeline: the SVG charts, read back as XML."""

import datetime
from xml.etree import ElementTree

from pcloud_plugin.dashboard import timeline
from pcloud_plugin.tests import base

SVG = '{http://www.w3.org/2000/svg}'
# A Monday, 14:00 UTC.
T0 = datetime.datetime(2026, 11, 30, 14)
NASTY = '<script>&"\'\n'


def hours(n):
    return T0 + datetime.timedelta(hours=n)


def parse(svg):
    """The SVG's root element; fails the test unless it is well-formed."""
    return ElementTree.fromstring(svg)


def elements(root, tag, cls=None):
    return [e for e in root.iter(SVG + tag)
            if cls is None or e.get('class') == cls]


def texts(root):
    return [''.join(e.itertext()) for e in elements(root, 'text')]


def title(element):
    return element.find(SVG + 'title').text


class AvailabilityTest(base.TestCase):

    def columns(self, free, hosts=4, **kwargs):
        root = parse(timeline.availability_svg(T0, free, hosts, **kwargs))
        return root, elements(root, 'g', 'pcloud-hour')

    def test_one_column_per_step_with_its_start_and_free_hosts(self):
        root, columns = self.columns([3, 0, 4, 1])
        self.assertEqual('svg', root.tag[len(SVG):])
        self.assertEqual(['2026-11-30T14:00', '2026-11-30T15:00',
                          '2026-11-30T16:00', '2026-11-30T17:00'],
                         [c.get('data-start') for c in columns])
        self.assertEqual(['3', '0', '4', '1'],
                         [c.get('data-free') for c in columns])

    def test_titles_say_when_and_how_many_are_free(self):
        _root, columns = self.columns([3, 0])
        self.assertEqual(['Mon 30 Nov 14:00 UTC: 3 of 4 hosts free',
                          'Mon 30 Nov 15:00 UTC: 0 of 4 hosts free'],
                         [title(c) for c in columns])
        _root, columns = self.columns([1], hosts=1)
        self.assertEqual('Mon 30 Nov 14:00 UTC: 1 of 1 host free',
                         title(columns[0]))
        # Instance slots: counted, out of nothing.
        _root, columns = self.columns([5, 1], hosts=5,
                                      unit=('slot', 'slots'), out_of=False)
        self.assertEqual(['Mon 30 Nov 14:00 UTC: 5 slots free',
                          'Mon 30 Nov 15:00 UTC: 1 slot free'],
                         [title(c) for c in columns])

    def test_steps_other_than_an_hour(self):
        _root, columns = self.columns(
            [1, 2, 3], step=datetime.timedelta(minutes=30))
        self.assertEqual(['2026-11-30T14:00', '2026-11-30T14:30',
                          '2026-11-30T15:00'],
                         [c.get('data-start') for c in columns])
        self.assertRaises(ValueError, timeline.availability_svg, T0, [1], 4,
                          step=datetime.timedelta(0))

    def test_bars_in_proportion_and_full_columns_marked(self):
        _root, columns = self.columns([4, 2, 0, 9])
        bars = [c.findall(SVG + 'rect')[1] for c in columns]
        self.assertEqual(['pcloud-free', 'pcloud-free', 'pcloud-full',
                          'pcloud-free'], [b.get('class') for b in bars])
        full, half = (float(b.get('height')) for b in bars[:2])
        self.assertAlmostEqual(full / 2, half, delta=0.1)
        # More free than hosts (a stale count) stays within the chart.
        self.assertEqual(full, float(bars[3].get('height')))
        self.assertEqual(float(bars[0].get('y')), float(bars[3].get('y')))

    def test_every_column_has_a_full_height_hit_area(self):
        _root, columns = self.columns([4, 0, 1])
        hits = [c.findall(SVG + 'rect')[0] for c in columns]
        self.assertEqual(['pcloud-hit'] * 3, [h.get('class') for h in hits])
        self.assertEqual(1, len({(h.get('y'), h.get('height'))
                                 for h in hits}))
        bar = columns[0].findall(SVG + 'rect')[1]
        self.assertEqual(hits[0].get('height'), bar.get('height'))
        # Side by side, each as wide as its step.
        xs = [float(h.get('x')) for h in hits]
        self.assertAlmostEqual(xs[1] - xs[0], float(hits[0].get('width')),
                               delta=0.1)
        self.assertAlmostEqual(xs[2] - xs[1], xs[1] - xs[0], delta=0.1)

    def test_booking_links_wrap_each_column(self):
        root, columns = self.columns(
            [1, 0], booking_url='/pcloud/book/?a="<b>"&start={start}')
        links = elements(root, 'a')
        self.assertEqual(2, len(links))
        self.assertEqual(
            ['/pcloud/book/?a="<b>"&start=2026-11-30T14%3A00',
             '/pcloud/book/?a="<b>"&start=2026-11-30T15%3A00'],
            [a.get('href') for a in links])
        self.assertEqual(columns, [a.find(SVG + 'g') for a in links])

    def test_no_links_without_a_booking_url(self):
        root, columns = self.columns([1, 0])
        self.assertEqual(2, len(columns))
        self.assertEqual([], elements(root, 'a'))

    def test_width_grows_with_the_steps(self):
        short = parse(timeline.availability_svg(T0, [1] * 10, 4))
        long = parse(timeline.availability_svg(T0, [1] * 500, 4))
        self.assertEqual('600', short.get('width'))
        self.assertGreaterEqual(float(long.get('width')), 500 * 6)

    def test_days_labelled_at_midnight_and_y_axis_labelled(self):
        root, _columns = self.columns([1] * 40, hosts=7)
        labels = texts(root)
        self.assertIn('Tue 1 Dec', labels)
        self.assertIn('Wed 2 Dec', labels)
        self.assertIn('0', labels)
        self.assertIn('7', labels)
        self.assertIn('18:00', labels)

    def test_nothing_to_draw(self):
        root, columns = self.columns([], hosts=0)
        self.assertEqual([], columns)
        self.assertIn('No data', texts(root))
        root, columns = self.columns([0, 2], hosts=0)
        self.assertEqual(['0', '2'], [c.get('data-free') for c in columns])
        self.assertEqual('Mon 30 Nov 14:00 UTC: 0 of 0 hosts free',
                         title(columns[0]))

    def test_aware_start_drawn_in_utc(self):
        start = T0.replace(tzinfo=datetime.timezone(
            datetime.timedelta(hours=2))) + datetime.timedelta(hours=2)
        root = parse(timeline.availability_svg(start, [1], 2))
        self.assertEqual('2026-11-30T14:00',
                         elements(root, 'g', 'pcloud-hour')[0].get(
                             'data-start'))


class GanttTest(base.TestCase):

    def bar(self, start, end, kind='pcloud', text='lease', mark=None):
        return {'start': start, 'end': end, 'kind': kind, 'text': text,
                'mark': mark}

    def draw(self, rows, start=T0, end=None, now=None):
        return parse(timeline.gantt_svg(start, end or hours(48), rows,
                                        now=now))

    def edges(self):
        """(left, right) of the plot: where an open bar begins and ends."""
        # Drawn on its own: the same for every chart of the window whose
        # host names are as short (they set the left edge).
        root = self.draw([('h', [self.bar(None, None)])])
        rect = elements(root, 'g', 'pcloud-bar')[0].find(SVG + 'rect')
        left = float(rect.get('x'))
        return left, left + float(rect.get('width'))

    def test_one_group_per_bar_with_its_data(self):
        root = self.draw([
            ('host-1', [self.bar(hours(1), hours(5)),
                        self.bar(hours(6), hours(7), 'virtual:instance')]),
            ('host-2', [self.bar(hours(-3), None, 'pcloud:host')]),
        ])
        bars = elements(root, 'g', 'pcloud-bar')
        self.assertEqual(
            [('pcloud', 'host-1', '2026-11-30T15:00', '2026-11-30T19:00'),
             ('virtual:instance', 'host-1', '2026-11-30T20:00',
              '2026-11-30T21:00'),
             ('pcloud:host', 'host-2', '2026-11-30T11:00', 'forever')],
            [(b.get('data-kind'), b.get('data-host'), b.get('data-start'),
              b.get('data-end')) for b in bars])
        self.assertEqual('lease (pcloud)\n'
                         'Mon 30 Nov 15:00 \u2013 Mon 30 Nov 19:00 UTC',
                         title(bars[0]))
        self.assertEqual('lease (pcloud:host)\n'
                         'Mon 30 Nov 11:00 \u2013 forever', title(bars[2]))
        self.assertEqual(['host-1', 'host-2'],
                         [t for t in texts(root) if t.startswith('host-')])

    def test_rows_stacked(self):
        root = self.draw([('a', [self.bar(hours(1), hours(2))]),
                          ('b', [self.bar(hours(1), hours(2))])])
        first, second = (float(b.find(SVG + 'rect').get('y'))
                         for b in elements(root, 'g', 'pcloud-bar'))
        self.assertEqual(20, second - first)

    def test_bars_clipped_to_the_window(self):
        root = self.draw([('h', [
            self.bar(hours(-10), hours(-2)),  # before
            self.bar(hours(50), hours(60)),  # after
            self.bar(None, hours(0)),  # ends as the window starts
            self.bar(hours(-10), hours(24), text='left'),
            self.bar(hours(24), hours(100), text='right'),
            self.bar(None, None, text='open'),
        ])])
        left, right = self.edges()
        bars = elements(root, 'g', 'pcloud-bar')
        self.assertEqual(['left', 'right', 'open'],
                         [title(b).split(' ')[0] for b in bars])
        spans = [(float(r.get('x')), float(r.get('x')) +
                  float(r.get('width')))
                 for r in (b.find(SVG + 'rect') for b in bars)]
        middle = (left + right) / 2
        for expected, span in zip([(left, middle), (middle, right),
                                   (left, right)], spans):
            self.assertAlmostEqual(expected[0], span[0], delta=0.1)
            self.assertAlmostEqual(expected[1], span[1], delta=0.1)
        # The bar's own moments, not the window's.
        self.assertEqual(('2026-11-30T04:00', '2026-12-01T14:00'),
                         (bars[0].get('data-start'), bars[0].get('data-end')))
        self.assertEqual(('', 'forever'),
                         (bars[2].get('data-start'), bars[2].get('data-end')))
        self.assertIn('before the window \u2013 forever', title(bars[2]))

    def test_text_is_escaped(self):
        svg = timeline.gantt_svg(T0, hours(48), [
            (NASTY, [self.bar(hours(1), hours(2), kind=NASTY, text=NASTY,
                              mark=NASTY)])])
        self.assertNotIn('<script>', svg)
        root = parse(svg)
        bar = elements(root, 'g', 'pcloud-bar')[0]
        self.assertEqual((NASTY, NASTY, NASTY),
                         (bar.get('data-host'), bar.get('data-kind'),
                          bar.get('data-mark')))
        self.assertTrue(title(bar).startswith(NASTY))
        self.assertIn(NASTY, texts(root))

    def test_characters_xml_forbids_are_dropped(self):
        root = self.draw([('h\x00ost\x1b', [
            self.bar(hours(1), hours(2), text='le\x08ase\ud800')])])
        bar = elements(root, 'g', 'pcloud-bar')[0]
        self.assertEqual('host', bar.get('data-host'))
        self.assertTrue(title(bar).startswith('lease (pcloud)'))

    def test_colours_by_kind_and_marks(self):
        root = self.draw([('h', [
            self.bar(hours(1), hours(2), 'pcloud'),
            self.bar(hours(1), hours(2), 'pcloud:host'),
            self.bar(hours(1), hours(2), 'virtual:instance'),
            self.bar(hours(1), hours(2), 'something:else'),
            self.bar(hours(1), hours(2), 'pcloud', mark='healing'),
            self.bar(hours(1), hours(2), 'pcloud', mark='degraded'),
        ])])
        bars = elements(root, 'g', 'pcloud-bar')
        rects = [b.findall(SVG + 'rect') for b in bars]
        fills = [r[0].get('fill') for r in rects]
        self.assertEqual(4, len(set(fills[:4])))
        self.assertEqual(timeline.OTHER_KIND, fills[3])
        self.assertEqual([fills[0]] * 2, fills[4:])
        self.assertEqual([1, 1, 1, 1, 2, 1], [len(r) for r in rects])
        self.assertEqual('url(#pcloud-hatch)', rects[4][1].get('fill'))
        self.assertIsNotNone(root.find('.//%spattern[@id="pcloud-hatch"]'
                                       % SVG))
        self.assertEqual([None] * 5 + [timeline.DEGRADED],
                         [r[0].get('stroke') for r in rects])
        self.assertEqual([None] * 4 + ['healing', 'degraded'],
                         [b.get('data-mark') for b in bars])
        self.assertIn('(pcloud, healing)', title(bars[4]))
        self.assertIn('(pcloud, degraded)', title(bars[5]))

    def test_now_drawn_only_inside_the_window(self):
        left, right = self.edges()
        root = self.draw([('h', [])], now=hours(12))
        line, = elements(root, 'line', 'pcloud-now')
        self.assertAlmostEqual(left + (right - left) / 4,
                               float(line.get('x1')), delta=0.1)
        self.assertEqual('now: Tue 1 Dec 02:00 UTC', title(line))
        for now in (None, hours(-1), hours(49)):
            self.assertEqual([], elements(self.draw([('h', [])], now=now),
                                          'line', 'pcloud-now'))

    def test_axis_and_legend(self):
        labels = texts(self.draw([('h', [])]))
        for label in ('Tue 1 Dec', 'Wed 2 Dec', 'pcloud', 'pcloud:host',
                      'virtual:instance', 'healing', 'degraded', '06:00'):
            self.assertIn(label, labels)

    def test_long_host_names_shortened_in_full_in_their_title(self):
        name = 'compute-' + 'x' * 80 + '.example.org'
        root = self.draw([(name, [self.bar(hours(1), hours(2))])])
        label, = [e for e in elements(root, 'text')
                  if ''.join(e.itertext()).startswith('compute-')]
        self.assertEqual(name, title(label))
        shown = label.find(SVG + 'title').tail
        self.assertLess(len(shown), len(name))
        self.assertTrue(name.startswith(shown[:-1]))
        self.assertTrue(shown.endswith('\u2026'))
        self.assertEqual(name, elements(root, 'g', 'pcloud-bar')[0].get(
            'data-host'))

    def test_empty_and_wrong_windows(self):
        root = self.draw([])
        self.assertEqual([], elements(root, 'g', 'pcloud-bar'))
        self.assertRaises(ValueError, timeline.gantt_svg, T0, T0, [])
        self.assertRaises(ValueError, timeline.gantt_svg, T0, hours(-1), [])

    def test_a_thousand_hosts(self):
        rows = [('host-%04d' % n, [
            self.bar(hours(n % 40), hours(n % 40 + 5)),
            self.bar(None, hours(3), 'virtual:instance', mark='healing'),
            self.bar(hours(30), None, 'pcloud:host', mark='degraded')])
            for n in range(1000)]
        root = self.draw(rows, now=hours(1))
        self.assertEqual(3000, len(elements(root, 'g', 'pcloud-bar')))
        self.assertGreaterEqual(float(root.get('height')), 1000 * 20)
