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
"""What the pcloud commands share."""


def client(cmd):
    """The pcloud API client of a command."""
    return cmd.app.client_manager.pcloud


def show_one(item, formatters=None):
    """A ShowOne's (names, values): the item's fields in name order, each

    through its formatter if ``formatters`` names one.
    """
    formatters = formatters or {}
    names = tuple(sorted(item))
    return names, tuple(formatters[n](item[n]) if n in formatters
                        else item[n] for n in names)
