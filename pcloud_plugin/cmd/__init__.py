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

"""Console scripts: pcloud-manage, pcloud-status, pcloud-sandbox. May
import anything of ours but scheduler/ and blazar/.
"""

import warnings

# Before 2026.2, oslo libraries our commands import bring in eventlet,
# which warns on every import that it is deprecated: ten lines above each
# command's output that are neither ours nor the operator's to act on.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
