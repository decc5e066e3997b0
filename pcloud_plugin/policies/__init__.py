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
"""Default policies of the Pcloud API (oslo.policy.policies entry point).
Imports nothing of ours.
"""

import itertools

from pcloud_plugin.policies import allocations
from pcloud_plugin.policies import availability
from pcloud_plugin.policies import base
from pcloud_plugin.policies import boot_checks
from pcloud_plugin.policies import host_flavors
from pcloud_plugin.policies import leases
from pcloud_plugin.policies import maintenances
from pcloud_plugin.policies import offerings
from pcloud_plugin.policies import pclouds


def list_rules():
    return list(itertools.chain(base.list_rules(),
                                host_flavors.list_rules(),
                                pclouds.list_rules(),
                                offerings.list_rules(),
                                availability.list_rules(),
                                allocations.list_rules(),
                                leases.list_rules(),
                                maintenances.list_rules(),
                                boot_checks.list_rules()))
