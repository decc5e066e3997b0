# Release notes build configuration (reno + sphinx).
extensions = ['reno.sphinxext']
source_suffix = '.rst'
master_doc = 'index'
project = 'pcloud-plugin Release Notes'
copyright = '2026, The pcloud-plugin Authors'
html_theme = 'alabaster'
