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
"""The dashboard in a real browser, on the sandbox (issue 34).

A tenant makes a pcloud, takes a host, finds the first free hour on the
availability timeline and books it from there, and sees the lease
ACTIVE; another project sees nothing of it; the admin's host timeline
shows both holders of the leased host, each in its window; once
authorized by name, the other project sees the pcloud.
"""

import datetime

from pcloud_plugin.sandbox import common
from pcloud_plugin.tests.functional.sandbox import browser
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

MINUTES = '%Y-%m-%dT%H:%M'


def _minutes(moment):
    return moment.strftime(MINUTES)


class Dashboard(test_capacity_truth._Capacity):

    def setUp(self):
        super().setUp()
        why = browser.missing()
        if why:
            self.skipTest(why)
        self.browser = self.useFixture(browser.Browser(self, self.sandbox))

    def _two_empty_computes(self):
        busy = {getattr(s, 'OS-EXT-SRV-ATTR:host') for s in
                self.nova.servers.list(search_opts={'all_tenants': 1})}
        for aggregate in self.nova.aggregates.list():
            busy.update(aggregate.hosts)
        free = [c for c in self.computes if c not in busy]
        self.assertGreaterEqual(len(free), 2, 'two empty computes needed')
        return free[:2]

    def _row(self, table, **data):
        """The rows of ``table`` whose data-<key> attributes are ``data``."""
        css = '#%s tr%s' % (table, ''.join(
            '[data-%s="%s"]' % item for item in data.items()))
        return self.browser.find_all(css)

    def test_book_from_the_timeline_others_see_nothing_admin_sees_it(self):
        page = self.browser
        computes = self._two_empty_computes()
        flavor = self._pool(*computes)
        name = 'dash-%s' % flavor[-6:]

        # The tenant makes a pcloud and takes a host into it.
        page.login(common.DEMO_USER)
        page.open('/project/pclouds/')
        page.find('#create-pcloud input[name=name]').send_keys(name)
        page.find('#create-pcloud button').click()
        page.seen('created')
        (pcloud_id,) = [p['id'] for p in self.demo.list_pclouds()
                        if p['name'] == name]
        self.addCleanup(self._drop_pcloud, self.demo, pcloud_id)
        self.assertEqual(1, len(self._row('pclouds', id=pcloud_id)))
        page.open('/project/pclouds/%s/' % pcloud_id)
        page.find('#take-host input[name=name]').send_keys('rack-a')
        page.find('#take-host select[name=flavor_id] option[value="%s"]'
                  % flavor).click()
        page.find('#take-host button').click()
        page.seen('took a host')
        page.picture('pcloud')
        self.assertEqual(1, len(self._row('hosts', name='rack-a')))
        holders = self._holders(flavor)
        (for_good,) = [c for c in computes if holders[c] == pcloud_id]
        (leased,) = [c for c in computes if c != for_good]
        for compute in computes:
            self.assertNotIn(compute, page.text())

        # The timeline: one host of the pool left to lease; the first
        # hour with it free, booked from there.
        page.open('/project/pcloud_availability/?flavor=%s' % flavor)
        hours = page.find_all('#timeline g.pcloud-hour')
        self.assertEqual(336, len(hours))
        free = [h.get_attribute('data-free') for h in hours]
        # One host to lease (the other is the pcloud's for good).
        self.assertEqual({'1'}, set(free) - {'0'})
        chosen = free.index('1')
        self.assertEqual(0, chosen, 'the host is not free now: %s' % free)
        first = hours[chosen].get_attribute('data-start')
        page.driver.execute_script(
            'arguments[0].closest("a").dispatchEvent('
            'new MouseEvent("click", {bubbles: true}))', hours[chosen])
        page.wait('the booking form from %s' % first, lambda: (
            page.find('#book-window input[name=start]').get_attribute(
                'value') == first))
        page.seen('picked an hour')
        page.picture('availability')
        page.find('#book-window input[name=name]').send_keys(name)
        page.find('#book-window select[name=pcloud_id] option[value="%s"]'
                  % pcloud_id).click()
        page.find('#book-window button').click()
        page.seen('booked')
        self.assertIn('Created lease %s.' % name, page.text())
        (lease,) = [lease for lease in self.demo.list_leases()
                    if lease['name'] == name]
        self.addCleanup(fixture.delete_lease, self.demo, lease['id'])
        page.wait('the lease ACTIVE', lambda: self._row(
            'leases', id=lease['id'])[0].find_element(
                'css selector', '.status').text == 'ACTIVE', reload=True)
        page.open('/project/pcloud_reservations/')
        (row,) = self._row('leases', id=lease['id'])
        page.picture('reservations')
        self.assertIn('pcloud:host: 1 host(s) of %s' % flavor, row.text)
        # Now the timeline shows the host taken for that hour, and a
        # second host there is refused with the API's reason.
        page.open('/project/pcloud_availability/?flavor=%s' % flavor)
        self.assertEqual('0', page.find_all('#timeline g.pcloud-hour')[
            chosen].get_attribute('data-free'))
        # The taken hour, asked for again.
        for field, value in (('start', first), ('end', _minutes(
                datetime.datetime.strptime(first, MINUTES)
                + datetime.timedelta(hours=1)))):
            page.driver.execute_script(
                'arguments[0].value = arguments[1]',
                page.find('#book-window input[name=%s]' % field), value)
        page.find('#book-window input[name=name]').send_keys(name + '-2')
        page.find('#book-window button').click()
        page.seen('refused')
        self.assertIn('Error:', page.text())
        self.assertEqual([name], [lease['name'] for lease in
                                  self.demo.list_leases()])
        # Asked for flexibly from the taken hour, on the Reservations
        # page: booked for the next one, the dates said.
        form = page.find('#create-lease')
        page.driver.execute_script(
            'arguments[0].value = arguments[1]',
            form.find_element('css selector', 'input[name=start]'), first)
        form.find_element('css selector', 'input[name=duration]').send_keys(
            '60')
        form.find_element('css selector', 'input[name=name]').send_keys(
            name + '-flexible')
        for select, value in (('host_flavor', flavor),
                              ('pcloud_id', pcloud_id)):
            form.find_element('css selector', 'select[name=%s] option'
                              '[value="%s"]' % (select, value)).click()
        form.find_element('css selector', 'button').click()
        page.seen('booked flexibly')
        self.assertIn('Created lease %s-flexible from' % name, page.text())
        (flexible,) = [found for found in self.demo.list_leases()
                       if found['name'] == name + '-flexible']
        self.assertEqual(
            (lease['end_date'][:16], _minutes(datetime.datetime.strptime(
                lease['end_date'][:16], MINUTES)
                + datetime.timedelta(hours=1))),
            (flexible['start_date'][:16], flexible['end_date'][:16]))
        # Gone again: the lease is extended into that hour next.
        fixture.delete_lease(self.demo, flexible['id'])
        page.open('/project/pcloud_reservations/')

        # Extended by an hour from the Reservations page.
        (row,) = self._row('leases', id=lease['id'])
        end = datetime.datetime.strptime(
            lease['end_date'][:16], MINUTES) + datetime.timedelta(hours=1)
        page.driver.execute_script(
            'arguments[0].value = arguments[1]',
            row.find_element('css selector', 'input[name=end]'),
            _minutes(end))
        row.find_element('css selector', 'button.btn-default').click()
        page.seen('extended')
        self.assertIn('Updated the lease.', page.text())
        lease = self.demo.show_lease(lease['id'])
        self.assertEqual(_minutes(end), lease['end_date'][:16])

        # Another project sees nothing of it.
        page.login(common.ALT_USER)
        for path in ('/project/pclouds/', '/project/pcloud_reservations/',
                     '/project/pcloud_availability/?flavor=%s'
                     % flavor):
            page.open(path)
            source = page.driver.page_source
            for secret in (pcloud_id, name, lease['id'], 'rack-a',
                           *computes):
                self.assertNotIn(secret, source, path)
        self.assertEqual([], self._row('pclouds'))
        self.assertEqual([], self._row('leases'))
        # A second holder of the same host, later: alt's lease into a
        # pcloud of its own, two hours after demo's ends.
        alt_pcloud = self._pcloud(self.alt)
        start = datetime.datetime.strptime(
            lease['end_date'][:16], MINUTES) + datetime.timedelta(hours=2)
        later = self._host_lease(self.alt, alt_pcloud, flavor,
                                 start=start.strftime('%Y-%m-%d %H:%M'),
                                 end=(start + datetime.timedelta(hours=1)
                                      ).strftime('%Y-%m-%d %H:%M'))

        # The admin's Gantt: the pcloud's host for good, and demo's then
        # alt's lease on the other, each in its window.
        page.login('admin')
        page.open('/admin/pcloud_host_timeline/')
        bars = sorted(
            (b.get_attribute('data-host'), b.get_attribute('data-kind'),
             b.get_attribute('data-start'), b.get_attribute('data-end'))
            for b in page.find_all('#gantt g.pcloud-bar')
            if b.get_attribute('data-host') in computes)
        page.seen('gantt')
        page.picture('host-timeline')
        self.assertEqual([
            (leased, 'pcloud:host', lease['start_date'][:16],
             lease['end_date'][:16]),
            (leased, 'pcloud:host', later['start_date'][:16],
             later['end_date'][:16])],
            [bar for bar in bars if bar[0] == leased])
        ((host, kind, since, until),) = [
            bar for bar in bars if bar[0] == for_good]
        self.assertEqual(('pcloud', 'forever'), (kind, until))
        self.assertLessEqual(since, _minutes(datetime.datetime.utcnow()))

        # Demo authorizes alt by its name (a member may not look it up:
        # the API does); alt then sees the pcloud, as authorized.
        page.login(common.DEMO_USER)
        page.open('/project/pclouds/%s/' % pcloud_id)
        page.find('#add-project input[name=project_id]').send_keys(
            common.ALT_PROJECT)
        page.find('#add-project button').click()
        page.seen('authorized alt')
        self.assertEqual(2, len(page.find_all('#projects li')))
        page.login(common.ALT_USER)
        page.open('/project/pclouds/')
        (row,) = self._row('pclouds', id=pcloud_id)
        self.assertIn('authorized', row.text)
