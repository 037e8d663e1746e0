# The security events' actions: users, passwords, devices, lockouts, feeds, replays and
# refused attempts, besides tokens, roles, privileges and groups.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('hisadmin', '0003_security_events_and_list_views'),
    ]

    operations = [
        migrations.AlterField(
            model_name='securityevent',
            name='action',
            field=models.CharField(choices=[('token issued', 'token issued'), ('token revoked', 'token revoked'), ('token reissued', 'token reissued'), ('token changed', 'token changed'), ('roles changed', 'roles changed'), ('privileges changed', 'privileges changed'), ('group changed', 'group changed'), ('user added', 'user added'), ('user changed', 'user changed'), ('user deleted', 'user deleted'), ('password reset', 'password reset'), ('password changed', 'password changed'), ('device added', 'device added'), ('device changed', 'device changed'), ('device deleted', 'device deleted'), ('login record deleted', 'login record deleted'), ('feed added', 'feed added'), ('feed changed', 'feed changed'), ('feed deleted', 'feed deleted'), ('dead letters replayed', 'dead letters replayed'), ('change refused', 'change refused')], max_length=40),
        ),
    ]
