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

"""The sandbox's demo: the story of everything that exists so far.

First the capacity ledger on its own, then the cloud through the real
``openstack``, ``nova`` and ``blazar`` clients and ``pcloud-manage``, run
as a user runs them. Each step prints what it shows; the first one that
does not hold stops the story, named. Each new piece adds its part here.

``steps`` runs and prints the numbered steps. The chapters, in the order
they are told: ``ledger_story`` (the ledger alone), ``cloud_story``
(servers, Blazar's hosts and instance slots; it tells the next two),
``pcloud_story`` (pclouds, and ``host_lease_story``: their pcloud:host
leases) and ``added_compute_story`` (a compute joins the running cloud).
What they run the clients with: ``commands`` (the command-line clients,
and the checks that one is refused) and ``placement`` (what Placement
says).
"""
