#!/bin/bash
# DevStack plugin for pcloud-plugin: installs the package into the shared
# Python environment, enables the PcloudFilter in nova.conf and our Blazar
# plugins in blazar.conf, and creates the ledger's database.

function install_pcloud_plugin {
    setup_develop "$PCLOUD_PLUGIN_DIR"
}

function _pcloud_keystone_auth {
    # Admin access to Nova and Placement for the plugins, as a service user.
    local conf=$1 group=$2
    iniset "$conf" "$group" auth_type password
    iniset "$conf" "$group" auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$conf" "$group" username nova
    iniset "$conf" "$group" password "$SERVICE_PASSWORD"
    iniset "$conf" "$group" user_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$conf" "$group" project_name "$SERVICE_PROJECT_NAME"
    iniset "$conf" "$group" project_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$conf" "$group" region_name "$REGION_NAME"
}

function configure_pcloud_plugin {
    # nova-scheduler: offer the filter and put it in the enabled list.
    local filters
    iniadd "$NOVA_CONF" filter_scheduler available_filters "$PCLOUD_FILTER_PATH"
    filters=$(iniget "$NOVA_CONF" filter_scheduler enabled_filters)
    if [[ ",$filters," != *",$PCLOUD_FILTER,"* ]]; then
        iniset "$NOVA_CONF" filter_scheduler enabled_filters \
            "${filters:+$filters,}$PCLOUD_FILTER"
    fi

    # blazar-manager and blazar-api: our plugins and their options.
    iniset "$PCLOUD_BLAZAR_CONF" manager plugins "$PCLOUD_BLAZAR_PLUGINS"
    iniset "$PCLOUD_BLAZAR_CONF" pcloud_database connection \
        "$(database_connection_url "$PCLOUD_DB_NAME")"
    _pcloud_keystone_auth "$PCLOUD_BLAZAR_CONF" pcloud_nova
    _pcloud_keystone_auth "$PCLOUD_BLAZAR_CONF" pcloud_placement
}

function init_pcloud_database {
    # In post-config, after Blazar's plugin configured it and before it
    # starts Blazar (its "extra" phase): blazar-manager reads the ledger
    # from its first moment.
    recreate_database "$PCLOUD_DB_NAME"
    pcloud-manage --config-file "$PCLOUD_BLAZAR_CONF" db upgrade
}

function init_pcloud_plugin {
    # Once nova-compute has registered the computes in Placement: the
    # first mirror pass at once (blazar-manager's periodic mirror keeps it
    # current from then on, computes added later included).
    pcloud-manage --config-file "$PCLOUD_BLAZAR_CONF" placement sync
}

if is_service_enabled pcloud-plugin; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing pcloud-plugin"
        install_pcloud_plugin
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring pcloud-plugin"
        configure_pcloud_plugin
        init_pcloud_database
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Initializing pcloud-plugin"
        init_pcloud_plugin
    fi
fi
