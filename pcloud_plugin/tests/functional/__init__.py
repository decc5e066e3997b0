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
"""Functional tests: our code against the real services and databases.

Nova's in-process harness (``nova/``, a stestr run of its own), Blazar's
API and manager in-process, real Placement, the sandbox's processes, and
the ledger on MariaDB and PostgreSQL where they answer. May import
anything of ours, nova, blazar and placement, never both nova and blazar
in one test module.
"""

from pcloud_plugin.tests import db_users

# Before any opportunistic fixture looks for its backend (oslo.db keeps
# the first answer for the process).
db_users.ensure()
