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
"""The reservation domain: what both reservation kinds (pcloud:host,
virtual:instance) decide, apart from how Blazar calls them: admission,
changes, lifecycles, healing. Imports neither blazar nor nova; of ours,
the packages below it (doc/source/contributor/layout.rst): cloud,
pcloud, clients and quota, the ledger (db), the capacity core, conf,
notifications, exception and faults. What it needs of Blazar's records
it asks of the plugin it is mixed into or called with (blazar/: the
lease_flags and reconciler ports, _started, _show, _mark_reservation).
"""
