
By3JeŒ‰dzŸyug£¡§°†y