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
"""Usage notifications, sent through oslo.messaging's notifier. Imports
nothing of ours outside this package.

``usage``: the event types, their publishers and the notifier the
plugins and the pcloud service call. ``usage_records``: the usage record
every usage event carries, and where its interval starts and ends.
``instance_payloads`` and ``host_payloads``: the rest of the bodies,
virtual:instance reservations' and those of whole hosts (pcloud:host
reservations, hosts pclouds hold for good).
"""
