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

"""Sphinx configuration of the documentation (tox -e docs).

The configuration and policy references and samples, and the command
reference, are generated from the installed package, so they say what
the code does.
"""

extensions = [
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
    'cliff.sphinxext',
]

# openstackdocstheme
openstackdocs_repo_name = 'openstack/pcloud-plugin'
openstackdocs_auto_name = False
openstackdocs_use_storyboard = False

# oslo_config.sphinxconfiggen: _static/pcloud.conf.sample
config_generator_config_file = '../../etc/pcloud/pcloud-config-generator.conf'
sample_config_basename = '_static/pcloud'

# oslo_policy.sphinxpolicygen: _static/pcloud.policy.yaml.sample
policy_generator_config_file = '../../etc/pcloud/pcloud-policy-generator.conf'
sample_policy_basename = '_static/pcloud'

# cliff.sphinxext: the commands of ``openstack pcloud``.
autoprogram_cliff_application = 'openstack'
# The output options every OpenStackClient command shares.
autoprogram_cliff_ignored = [
    '--help', '--format', '--column', '--max-width', '--fit-width',
    '--print-empty', '--prefix', '--noindent', '--quote', '--sort-column',
    '--sort-ascending', '--sort-descending']

source_suffix = '.rst'
master_doc = 'index'
project = 'pcloud-plugin'
copyright = '2026, The pcloud-plugin Authors'
exclude_patterns = ['_build']
pygments_style = 'native'

html_theme = 'openstackdocs'
