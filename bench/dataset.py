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

"""Instance reservations on a cloud of hosts, seeded and independent.

Hosts of four sizes; existing virtual:instance reservations of six flavors
(CPU-, memory- and disk-leaning shapes), 1 to 10 slots each, affinity
true, false or none in equal parts, in windows from 1 hour to 10 days
(log-uniform: many short ones, a few long) over 30 days. Each is laid on
hosts at random, where a per-host interval check says it fits beside
those laid before it, so the data is a valid state: no host holds more
than it has at any moment. A reservation that finds no room after a few
tries is drawn again.

The requests to time are drawn the same way, 1 to 50 slots (small ones
more often), any affinity; an affinity-true request is never larger than
the largest host holds of its flavor, so that a refusal is contention,
not a request no cloud of these hosts could take.

Nothing here knows our code or Blazar's: the rows come out as plain
dicts keyed by table name, for any loader to insert.
"""

import bisect
import collections
import datetime
import math
import random

T0 = datetime.datetime(2031, 1, 1)
DAYS = 30
HOURS = DAYS * 24
MAX_HOURS = 10 * 24
PROJECT = 'bench-project'
CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')

# (vcpus, memory_mb, local_gb), weight
HOST_SIZES = (((32, 131072, 1000), 4),
              ((64, 262144, 2000), 3),
              ((96, 393216, 4000), 2),
              ((128, 1048576, 8000), 1))
# (vcpus, memory_mb, disk_gb), weight
FLAVORS = (((1, 2048, 20), 3),
           ((2, 4096, 40), 4),
           ((4, 8192, 80), 3),
           ((8, 32768, 160), 2),
           ((16, 65536, 320), 1),
           ((4, 16384, 500), 1))
AFFINITIES = (True, False, None)
# Random hosts looked at before a reservation is drawn again.
TRIES = 40

Host = collections.namedtuple('Host', 'index uuid name size')
# hosts: {host index: slots}; start and end in hours after T0.
Reservation = collections.namedtuple(
    'Reservation', 'index id flavor amount affinity start end hosts')
Request = collections.namedtuple(
    'Request', 'flavor amount affinity start end')


def moment(hours):
    return T0 + datetime.timedelta(hours=hours)


def host_uuid(index):
    """The provider uuid of host index, as its rows give it."""
    return 'rp-%05d' % index


def _weighted(rng, choices):
    return rng.choices([c for c, _w in choices],
                       weights=[w for _c, w in choices])[0]


def _window(rng):
    """(start, end) in hours: log-uniform length, inside the 30 days."""
    length = min(MAX_HOURS, int(round(math.exp(
        rng.uniform(0, math.log(MAX_HOURS))))))
    start = rng.randrange(HOURS - length + 1)
    return start, start + length


class _Timeline:
    """What is laid on one host: (start, end, usage) by start."""

    def __init__(self, size):
        self.size = size
        self.starts = []
        self.laid = []

    def free_slots(self, start, end, flavor):
        """How many slots of flavor fit for the whole of [start, end)."""
        lo = bisect.bisect_left(self.starts, start - MAX_HOURS)
        hi = bisect.bisect_left(self.starts, end)
        overlap = [iv for iv in self.laid[lo:hi] if iv[1] > start]
        peak = [0, 0, 0]
        # Usage only rises where a reservation starts: the peak is at the
        # window's start or at one of those.
        for at in {start} | {iv[0] for iv in overlap if iv[0] > start}:
            used = [0, 0, 0]
            for s, e, usage in overlap:
                if s <= at < e:
                    for k in range(3):
                        used[k] += usage[k]
            peak = [max(p, u) for p, u in zip(peak, used)]
        return min((self.size[k] - peak[k]) // flavor[k]
                   for k in range(3) if flavor[k])

    def lay(self, start, end, flavor, slots):
        at = bisect.bisect_right(self.starts, start)
        self.starts.insert(at, start)
        self.laid.insert(at, (start, end, tuple(n * slots for n in flavor)))


class Dataset:
    """hosts, reservations and the timelines they were checked on."""

    def __init__(self, host_count, reservation_count, seed=2031):
        self.rng = random.Random(seed)
        self.hosts = [Host(i, host_uuid(i), 'cn%05d' % i,
                           _weighted(self.rng, HOST_SIZES))
                      for i in range(host_count)]
        self._timelines = [_Timeline(h.size) for h in self.hosts]
        self.redrawn = 0
        self.reservations = []
        while len(self.reservations) < reservation_count:
            flavor = _weighted(self.rng, FLAVORS)
            start, end = _window(self.rng)
            amount = self.rng.randint(1, 10)
            affinity = self.rng.choice(AFFINITIES)
            hosts = self._fit(flavor, amount, affinity, start, end)
            if hosts is None:
                self.redrawn += 1
                continue
            self.lay(hosts, flavor, start, end)
            n = len(self.reservations)
            self.reservations.append(Reservation(
                n, 'res-%06d' % n, flavor, amount, affinity, start, end,
                hosts))

    def _fit(self, flavor, amount, affinity, start, end):
        """{host index: slots} for a reservation, or None."""
        hosts, left = {}, amount
        for _try in range(TRIES):
            index = self.rng.randrange(len(self.hosts))
            if index in hosts:
                continue
            free = self._timelines[index].free_slots(start, end, flavor)
            if affinity is True:
                if free >= amount:
                    return {index: amount}
            elif free:
                hosts[index] = 1 if affinity is False else min(free, left)
                left -= hosts[index]
                if not left:
                    return hosts
        return None

    def lay(self, hosts, flavor, start, end):
        for index, slots in hosts.items():
            self._timelines[index].lay(start, end, flavor, slots)

    def free_slots(self, index, start, end, flavor):
        """Slots of flavor host index has free in [start, end) (hours)."""
        return self._timelines[index].free_slots(start, end, flavor)

    def requests(self, count, seed):
        """count Requests to admit, drawn with a generator of their own."""
        rng = random.Random(seed)
        largest = max(size for size, _w in HOST_SIZES)
        found = []
        for _n in range(count):
            flavor = _weighted(rng, FLAVORS)
            affinity = rng.choice(AFFINITIES)
            most = 50
            if affinity is True:
                most = min(most, min(largest[k] // flavor[k]
                                     for k in range(3) if flavor[k]))
            amount = min(most, int(math.exp(rng.uniform(0, math.log(51)))))
            start, end = _window(rng)
            found.append(Request(flavor, amount, affinity, start, end))
        return found

    # --- rows ------------------------------------------------------------

    def ledger_rows(self, now):
        """{table: rows} of the ledger: hosts as providers (id = index +

        1), reservations as claims, one row per host and class.
        """
        providers = [dict(id=h.index + 1, uuid=h.uuid, name=h.name,
                          generation=0, can_host=1,
                          root_provider_id=h.index + 1, created_at=now)
                     for h in self.hosts]
        inventories = [dict(resource_provider_id=h.index + 1,
                            resource_class_id=k + 1, total=h.size[k],
                            reserved=0, min_unit=1, max_unit=h.size[k],
                            step_size=1, allocation_ratio=1.0,
                            created_at=now)
                       for h in self.hosts for k in range(3)]
        consumers, allocations = [], []
        for r in self.reservations:
            start, end = moment(r.start), moment(r.end)
            consumers.append(dict(uuid=r.id, generation=0, start_time=start,
                                  end_time=end, created_at=now))
            allocations.extend(
                dict(resource_provider_id=index + 1, resource_class_id=k + 1,
                     consumer_id=r.id, used=slots * r.flavor[k],
                     start_time=start, end_time=end, created_at=now)
                for index, slots in sorted(r.hosts.items())
                for k in range(3) if r.flavor[k])
        return {'resource_classes': [dict(id=k + 1, name=rc) for k, rc in
                                     enumerate(CLASSES)],
                'resource_providers': providers,
                'inventories': inventories,
                'consumers': consumers,
                'allocations': allocations}

    def blazar_rows(self, now):
        """{table: rows} of Blazar's database: hosts as computehosts, each

        reservation a lease with its instance reservation, one host
        allocation per slot (as Blazar's plugin makes them) and its start
        and end events.
        """
        hosts = [dict(id='host-%05d' % h.index, vcpus=h.size[0],
                      memory_mb=h.size[1], local_gb=h.size[2],
                      cpu_info='{}', hypervisor_type='QEMU',
                      hypervisor_version=1000, hypervisor_hostname=h.name,
                      service_name=h.name, availability_zone='nova',
                      trust_id='trust', reservable=True, created_at=now)
                 for h in self.hosts]
        leases, reservations, instances, allocations, events = (
            [], [], [], [], [])
        for r in self.reservations:
            lease = 'lease-%06d' % r.index
            start, end = moment(r.start), moment(r.end)
            leases.append(dict(id=lease, name=lease, project_id=PROJECT,
                               user_id='u', start_date=start, end_date=end,
                               trust_id='trust', status='PENDING',
                               degraded=False, created_at=now))
            reservations.append(dict(
                id=r.id, lease_id=lease, resource_id='ir-%06d' % r.index,
                resource_type='virtual:instance', status='pending',
                missing_resources=False, resources_changed=False,
                created_at=now))
            instances.append(dict(
                id='ir-%06d' % r.index, reservation_id=r.id,
                vcpus=r.flavor[0], memory_mb=r.flavor[1],
                disk_gb=r.flavor[2], amount=r.amount, affinity=r.affinity,
                resource_properties='', created_at=now))
            allocations.extend(
                dict(id='alloc-%06d-%d-%d' % (r.index, index, s),
                     compute_host_id='host-%05d' % index,
                     reservation_id=r.id, created_at=now)
                for index, slots in sorted(r.hosts.items())
                for s in range(slots))
            events.extend(dict(id='ev-%06d-%s' % (r.index, kind),
                               lease_id=lease, event_type=kind, time=at,
                               status='UNDONE', created_at=now)
                          for kind, at in (('start_lease', start),
                                           ('end_lease', end)))
        return {'computehosts': hosts, 'leases': leases,
                'reservations': reservations,
                'instance_reservations': instances,
                'computehost_allocations': allocations, 'events': events}
