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

"""The Pcloud service: pclouds over Nova aggregates (service), with its
host flavors (host_flavors), allocation ratios (ratios) and view of
Nova (cloud) beside it, the aggregate codec (pure: the filter imports
it), the Blazar/pcloud host partition, and the ledger's record of who
holds pclouds and hosts. May
import capacity, clients, conf, db and notifications of ours, never
nova or blazar.
"""
