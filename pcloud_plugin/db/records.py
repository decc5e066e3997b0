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
"""A reservation table and its child table, read and written one way.

Each kind of reservation keeps a row per reservation (unique
reservation_id) and child rows keyed by the same id: the slots of
virtual:instance ones (db.reservations), the hosts of pcloud:host ones
(db.host_reservations). A subclass of Records describes one kind; the
kind's module keeps its public functions (each with
@db_api.retry_on_deadlock, which these methods leave to them) and
whatever only that kind has.
"""

import collections

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin import exception


class Records(object):
    """One kind of reservation: a subclass sets these attributes (shown

    may stay empty) and overrides the first methods where its kind
    differs.
    """
    table = None        # the reservations
    child_table = None  # their children, by reservation_id
    fields = ()         # the columns a caller sets (update refuses others)
    shown = ()          # columns read but never set by a caller
    child_order = None  # the child column children are listed by
    children = None     # the key of the children in a reservation's dict
    not_found = None    # the NotFound raised, with reservation=...
    noun = None         # the kind, in Conflict messages

    # --- what may differ between kinds ------------------------------

    def row_as_dict(self, row):
        return {c: row[c] for c in ('reservation_id',) + self.shown
                + self.fields}

    def child_as_dict(self, row):
        return dict(row)

    def child_stored(self, child):
        """The child table's columns (but reservation_id) of a child."""
        raise NotImplementedError()

    def stored(self, values):
        """``values`` as columns (what a caller gives may differ)."""
        return values

    def check(self, values):
        """Refuse values the columns could hold but the kind cannot."""

    # --- the same for every kind ------------------------------------

    def _children_of(self, session, reservation_ids):
        children = collections.defaultdict(list)
        if reservation_ids:
            child = self.child_table
            for row in session.execute(
                    sa.select(child).where(
                        child.c.reservation_id.in_(reservation_ids))
                    .order_by(child.c[self.child_order])).mappings():
                children[row['reservation_id']].append(
                    self.child_as_dict(row))
        return children

    def _as_dict(self, row, children):
        found = self.row_as_dict(row)
        found[self.children] = children
        return found

    def _write_children(self, session, reservation_id, children, new=False):
        rows = [self.child_stored(c) for c in children]
        if new:
            # Nothing to replace yet: no look for rows first. An INSERT of
            # no rows would try one row of defaults.
            if rows:
                session.execute(self.child_table.insert(), [
                    dict(row, reservation_id=reservation_id)
                    for row in rows])
        else:
            db_api.replace_rows(session, self.child_table,
                                {'reservation_id': reservation_id}, rows)

    def create(self, context, reservation_id, values, children):
        """Record a reservation (the ``fields`` of ``values``) and its

        children; Conflict if the reservation id is taken.
        """
        row = self.stored({f: values.get(f) for f in self.fields})
        self.check(row)
        with db_api.writer(context) as session:
            try:
                session.execute(self.table.insert().values(
                    reservation_id=reservation_id,
                    created_at=timeutils.utcnow(), **row))
                session.flush()
            except db_exc.DBDuplicateEntry:
                raise exception.Conflict(
                    reason='%s %s already exists'
                    % (self.noun, reservation_id))
            self._write_children(session, reservation_id, children,
                                 new=True)

    def get(self, context, value, column='reservation_id', name=None):
        """The reservation whose ``column`` is ``value``, with its

        children, or not_found naming it ``name`` (else the value).
        """
        with db_api.reader(context) as session:
            row = session.execute(sa.select(self.table).where(
                self.table.c[column] == value)).mappings().first()
            if row is None:
                raise self.not_found(
                    reservation=value if name is None else name)
            reservation_id = row['reservation_id']
            return self._as_dict(row, self._children_of(
                session, [reservation_id])[reservation_id])

    def list_reservations(self, context, where=(), ending_after=None, **equal):
        """Reservations with their children, oldest first: those meeting

        every condition of ``where``, ending after ``ending_after`` if
        given, and whose columns named in ``equal`` hold the values
        given (a None value: any).
        """
        table = self.table
        query = sa.select(table).where(*where).order_by(table.c.id)
        for column, value in equal.items():
            if value is not None:
                query = query.where(table.c[column] == value)
        if ending_after is not None:
            query = query.where(table.c.end_time > ending_after)
        with db_api.reader(context) as session:
            rows = list(session.execute(query).mappings())
            children = self._children_of(
                session, [r['reservation_id'] for r in rows])
            return [self._as_dict(r, children[r['reservation_id']])
                    for r in rows]

    def update(self, context, reservation_id, values, children=None):
        """Change the stored fields in ``values`` and, if given, replace

        the children.
        """
        unknown = set(values) - set(self.fields)
        if unknown:
            raise exception.Invalid(reason='unknown fields %s'
                                    % ', '.join(sorted(unknown)))
        self.check(values)
        with db_api.writer(context) as session:
            result = session.execute(self.table.update().where(
                self.table.c.reservation_id == reservation_id).values(
                    updated_at=timeutils.utcnow(), **self.stored(values)))
            if result.rowcount != 1:
                raise self.not_found(reservation=reservation_id)
            if children is not None:
                self._write_children(session, reservation_id, children)

    def delete(self, context, reservation_id):
        """Forget a reservation: its children first (they point at it)."""
        with db_api.writer(context) as session:
            session.execute(self.child_table.delete().where(
                self.child_table.c.reservation_id == reservation_id))
            session.execute(self.table.delete().where(
                self.table.c.reservation_id == reservation_id))
