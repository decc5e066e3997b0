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
"""The openstack.cli.extension entry point ``pcloud``.

The Pcloud API is an extension of Blazar's v1 API, so the client finds
it at the ``reservation`` endpoint of the catalog (or the one given as
``--os-endpoint`` with token auth, or the cloud's
``reservation_endpoint_override``).
"""

import logging

from osc_lib import utils

LOG = logging.getLogger(__name__)

# python-blazarclient (4.x) declares the openstack.reservation.v1 entry
# point reservation_host_unset, whose class UnsetAttributeHost its
# module does not have: stevedore then logs, on the logger of
# stevedore.extension, "Could not load 'reservation_host_unset': ..." at
# every openstack command. Only that record is dropped: any other entry
# point that fails to load, this one failing otherwise included, is
# still logged.
KNOWN_BAD_ENTRY_POINT = 'reservation_host_unset'
KNOWN_BAD_CLASS = 'UnsetAttributeHost'
STEVEDORE_LOGGER = 'stevedore.extension'


class KnownBadEntryPointFilter(logging.Filter):
    """Drops stevedore's load failure of python-blazarclient's

    reservation_host_unset for want of UnsetAttributeHost, nothing else.
    """

    def filter(self, record):
        args = record.args if isinstance(record.args, tuple) else ()
        return not (record.msg == 'Could not load %r: %s'
                    and len(args) == 2
                    and args[0] == KNOWN_BAD_ENTRY_POINT
                    and isinstance(args[1], AttributeError)
                    and KNOWN_BAD_CLASS in str(args[1]))


def silence_known_bad_entry_point(logger_name=STEVEDORE_LOGGER):
    """Install the filter once on the logger that emits the record."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, KnownBadEntryPointFilter)
               for f in logger.filters):
        logger.addFilter(KnownBadEntryPointFilter())


# openstackclient imports this module (openstack.cli.extension) before
# it loads any command group.
silence_known_bad_entry_point()

DEFAULT_API_VERSION = '1'
SERVICE_TYPE = 'reservation'

# Required by the OSC plugin interface.
API_NAME = 'pcloud'
API_VERSION_OPTION = 'os_pcloud_api_version'
API_VERSIONS = {
    '1': 'pcloud_plugin.osc.client.Client',
}


def make_client(instance):
    """The Pcloud client of an OSC ClientManager."""
    client_class = utils.get_client_class(
        API_NAME, instance._api_version[API_NAME], API_VERSIONS)
    LOG.debug('Instantiating pcloud client: %s', client_class)
    endpoint = instance.get_endpoint_for_service_type(
        SERVICE_TYPE, region_name=instance.region_name,
        interface=instance.interface)
    return client_class(session=instance.session, endpoint=endpoint,
                        region_name=instance.region_name,
                        interface=instance.interface)


def build_option_parser(parser):
    """Add the global option --os-pcloud-api-version."""
    parser.add_argument(
        '--os-pcloud-api-version',
        metavar='<pcloud-api-version>',
        default=utils.env('OS_PCLOUD_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='Pcloud API version, default=%s (Env: OS_PCLOUD_API_VERSION)'
        % DEFAULT_API_VERSION)
    return parser
