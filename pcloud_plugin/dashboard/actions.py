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
"""What every form of the plugin does the same way: its POST makes one

call of the Pcloud API as the user, says how it went and goes back to a
page. The API checks the input and its refusal names the field.
"""

from django import http
from django.views import generic
from horizon import messages

from pcloud_plugin.dashboard import api


class Action(generic.View):
    """A POST-only view. Subclasses give ``act(request, client, **kw)``,

    which returns the success message, and ``back(request, **kw)``, the
    URL to go back to.
    """

    def post(self, request, **kwargs):
        try:
            done = self.act(request, api.client(request), **kwargs)
        except api.FAILURES as e:
            messages.error(request, api.reason(e))
        else:
            messages.success(request, done)
        return http.HttpResponseRedirect(self.back(request, **kwargs))

    def act(self, request, client, **kwargs):
        raise NotImplementedError()

    def back(self, request, **kwargs):
        raise NotImplementedError()
