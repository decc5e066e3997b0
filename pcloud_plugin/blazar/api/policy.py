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
"""oslo.policy enforcement of pcloud_plugin.policies.

An Enforcer of our own over the global config: it reads the policy file
Blazar's API reads ([oslo_policy] policy_file), so an operator overrides
our rules where they override Blazar's.
"""

import threading

from oslo_policy import policy as oslo_policy

from pcloud_plugin import conf
from pcloud_plugin import exception
from pcloud_plugin import policies

CONF = conf.CONF

_ENFORCER = None
_LOCK = threading.Lock()


def get_enforcer():
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None:
            enforcer = oslo_policy.Enforcer(CONF)
            enforcer.register_defaults(policies.list_rules())
            _ENFORCER = enforcer
        return _ENFORCER


def reset():
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is not None:
            _ENFORCER.clear()
        _ENFORCER = None


def authorize(context, action, target, do_raise=True):
    """Whether context may do action on target (a dict with project_id).

    Refusals raise PolicyNotAuthorized when do_raise, else return False.
    """
    try:
        return get_enforcer().authorize(action, target, context,
                                        do_raise=True)
    except (oslo_policy.PolicyNotAuthorized, oslo_policy.InvalidScope):
        if do_raise:
            raise exception.PolicyNotAuthorized(action=action)
        return False
